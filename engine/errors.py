"""What the engine raises. Each message is written for the person who made the request."""


class EngineError(Exception):
    """Base class for engine errors."""


class InvalidRequest(EngineError, ValueError):
    """The request cannot be run as given (too long a prompt, a size the model cannot make...)."""


class ModelUnavailable(EngineError):
    """The preset is unknown, or its weights are not on this machine."""


class QueueFull(EngineError):
    """Back-pressure: the engine already holds as many requests as it accepts."""


class Cancelled(EngineError):
    """The request was cancelled before it finished."""
