"""Spotforge application layer: configuration, use cases (services), UI and CLI."""
