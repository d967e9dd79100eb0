"""The errors a user can cause, and the one list of them that every entry point shows as is.

A user error's message is one plain sentence saying what to change; it never holds a path or
another exception's text. Anything not listed here is a fault of ours: logged, and shown only as
an apology with a reference (see `app.ui.studio.friendly`).
"""

from __future__ import annotations

from storage import AssetTooLarge, InvalidAsset, InvalidTransition, InvalidValue, NotFound
from templates.errors import BriefError


class UserError(Exception):
    """Something the user asked for that cannot be done as asked; the message says why."""


class UploadRefused(UserError):
    """An uploaded file that cannot be taken as what it was given for (corrupt, too large, of
    the wrong kind): the form's other answers may be fine, but this file must be replaced."""


class TryLater(UserError):
    """Refused for now; the same request after `retry_after_s` seconds may succeed."""

    def __init__(self, message: str, retry_after_s: float):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class Busy(TryLater):
    """Too much work is waiting before this request."""


USER_ERRORS: tuple[type[Exception], ...] = (
    UserError,
    BriefError,
    NotFound,
    AssetTooLarge,
    InvalidAsset,
    InvalidTransition,
    InvalidValue,
)


def user_errors() -> tuple[type[Exception], ...]:
    """USER_ERRORS and the engine's own that a user causes (a request it refuses, a model that
    is not installed, a full engine queue). It imports the engine, so it is for processes that
    generate."""
    from engine import InvalidRequest, ModelUnavailable, QueueFull

    return (*USER_ERRORS, InvalidRequest, ModelUnavailable, QueueFull)
