"""What a review finds.

Each check answers for one variant with a `Verdict`: passed (True, False, or None when it cannot
judge yet: nothing rendered, no classifier), a score from 0 to 1 (higher is better) and a reason a
shop owner understands. `VariantReview` holds one variant's verdicts and `SpotReview` a whole
spot's; a `SceneJudge` names the landscape and light a background shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from PIL import Image

from engine import Seen


@dataclass(frozen=True)
class Verdict:
    passed: bool | None  # None: cannot be judged yet (nothing to judge, or no means to)
    score: float | None  # 0 to 1, higher is better
    why: str

    def to_dict(self) -> dict[str, Any]:
        score = None if self.score is None else round(float(self.score), 3)
        return {"passed": self.passed, "score": score, "why": self.why}


def not_judged(why: str) -> Verdict:
    return Verdict(None, None, why)


@dataclass
class VariantReview:
    id: int
    geography: str
    audience: str
    status: str  # the variant's own: refine never touches an approved one
    checks: dict[str, Verdict]
    seconds: dict[str, float] = field(default_factory=dict)  # what each check cost

    @property
    def passed(self) -> bool:
        """No check failed (those that could not judge neither pass nor fail a variant)."""
        return all(v.passed is not False for v in self.checks.values())

    @property
    def failed(self) -> list[str]:
        return [name for name, v in self.checks.items() if v.passed is False]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "geography": self.geography,
            "audience": self.audience,
            "passed": self.passed,
            "checks": {name: v.to_dict() for name, v in self.checks.items()},
        }


@dataclass
class SpotReview:
    spot_id: int
    variants: list[VariantReview]
    seconds: float = 0.0  # the whole review, loading included

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.variants)

    @property
    def seconds_per_variant(self) -> float:
        return self.seconds / len(self.variants) if self.variants else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"variants": [v.to_dict() for v in self.variants]}


class SceneJudge(Protocol):
    """Names the landscape each picture shows, in the library's words ("snowy peaks"), or with
    `places` the built-in place it shows ("Manhattan"), and its light (a time of day: "day",
    "golden", "night"); `engine.scene_judge` gives the project's."""

    places: bool

    def judge(self, images: Sequence[Image.Image]) -> list[Seen]: ...


def _sentence(parts: list[str]) -> str:
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."
