"""Recorded in every result, so a variant says which engine made it."""

ENGINE_VERSION = "0.1.0"
