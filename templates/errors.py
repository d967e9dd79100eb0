"""Errors in what a business gave a template: its copy, colours, photos or audio."""


class BriefError(Exception):
    """The brief cannot be made into a spot as it is; the message says what to change."""
