"""Use cases: where a campaign meets storage, templates and the engine.

The UI and the CLI call only these. Errors a user can cause are raised as one of
`USER_ERRORS` (`app.services.errors`), whose message is written to be shown as it is.
"""

from app.services.context import AppContext
from app.services.errors import USER_ERRORS, Busy, TryLater, UserError, user_errors

__all__ = ["USER_ERRORS", "AppContext", "Busy", "TryLater", "UserError", "user_errors"]
