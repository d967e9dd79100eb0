"""Answers to API calls made with an idempotency key, per business and endpoint."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError

from storage.models import Answer
from storage.scope import Scope


class Answers:
    def __init__(self, scope: Scope):
        self._scope = scope

    def claim(self, endpoint: str, key: str) -> Answer | None:
        """Take `key` for a call about to be answered: None if it is this call's to answer,
        else the earlier call's record (its `response` None while that call is under way)."""
        try:
            with self._scope.session.begin_nested():
                self._scope.add(Answer(endpoint=endpoint, key=key))
            return None
        except IntegrityError:
            return self._get(endpoint, key)

    def keep(self, endpoint: str, key: str, response: dict[str, Any]) -> None:
        self._get(endpoint, key).response = response

    def release(self, endpoint: str, key: str) -> None:
        """The call failed: the key is free for the retry to answer."""
        row = self._get(endpoint, key)
        if row is not None:
            self._scope.session.delete(row)

    def _get(self, endpoint: str, key: str) -> Answer | None:
        query = self._scope.select(Answer).where(Answer.endpoint == endpoint, Answer.key == key)
        return self._scope.session.scalars(query).one_or_none()
