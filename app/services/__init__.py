"""Use cases: where a campaign meets storage, templates and the engine.

The UI and the CLI call only these. Errors a user can cause are raised as one of
`USER_ERRORS`, whose message is written to be shown as it is.
"""

from app.services.context import AppContext
from storage.errors import StorageError

USER_ERRORS: tuple[type[Exception], ...] = (StorageError, ValueError)


def user_errors() -> tuple[type[Exception], ...]:
    """USER_ERRORS and the engine's own (a missing model, a full engine queue). It imports the
    engine, so it is for processes that generate."""
    from engine.errors import EngineError

    return (*USER_ERRORS, EngineError)


__all__ = ["USER_ERRORS", "AppContext", "user_errors"]
