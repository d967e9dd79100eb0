"""Errors that storage raises; each message says what was wrong in words a user can act on."""


class StorageError(Exception):
    """Base class for storage errors."""


class NotFound(StorageError):
    """A row does not exist, or belongs to another business (indistinguishable on purpose)."""

    def __init__(self, kind: str, ident: object):
        super().__init__(f"{kind} {ident!r} not found")
        self.kind = kind
        self.ident = ident


class InvalidValue(StorageError):
    """A value a user gave (a name, a colour, an email) that cannot be stored as it is."""


class AssetTooLarge(StorageError):
    def __init__(self, limit: int):
        super().__init__(f"file is too large: the limit is {limit / 1e6:.1f} MB")
        self.limit = limit


class InvalidAsset(StorageError):
    """The bytes are not a file type we accept, or are corrupt."""


class InvalidTransition(StorageError):
    def __init__(self, kind: str, current: str, target: str, allowed: list[str]):
        options = ", ".join(allowed) if allowed else "none (final state)"
        super().__init__(
            f"{kind} cannot go from {current!r} to {target!r}; allowed from {current!r}: {options}"
        )
        self.current = current
        self.target = target
