"""Spot templates, storyboards, overlays, video assembly, broadcast export and QC."""
