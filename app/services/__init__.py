"""Use cases: where a campaign meets storage, templates and the engine.

The UI and the CLI call only these. Errors a user can cause are raised as one of
`USER_ERRORS`, whose message is written to be shown as it is.
"""

from app.services.context import AppContext
from storage.errors import StorageError

USER_ERRORS: tuple[type[Exception], ...] = (StorageError, ValueError)

__all__ = ["USER_ERRORS", "AppContext"]
