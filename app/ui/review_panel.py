"""The Personalize tab's review: every variant checked before the owner looks ("Check
variants"), what failed flagged in plain words, and "Fix these", which makes the failures
again for the app's worker while a timer follows them; the same as named endpoints for agents
(`review_variants`, `fix_variants` with an idempotency key, `fix_progress`)."""

from __future__ import annotations

import time

import gradio as gr

from app.services.answers import answered
from app.services.review import SpotReview, review_spot
from app.services.review import refine as refining
from app.ui.studio import Studio, _id, friendly
from app.ui.text import md

# Each check as the owner reads it.
NAMES = {
    "legibility": "Text",
    "product_fidelity": "Product",
    "background_match": "Place",
    "composition": "Layout",
    "qc": "Delivery spec",
    "distinct": "Too alike",
    "integrity": "Files",
}


class ReviewPanel:
    def __init__(self, studio: Studio):
        self.studio = studio

    # The page --------------------------------------------------------------------------------

    @friendly
    def check_variants(self, spot_id, request: gr.Request) -> tuple:
        """The spot's review as flags, and "Fix these" usable when something can be fixed."""
        result = self._review(spot_id, request)
        return flags(result), gr.Button(interactive=bool(_fixable(result)))

    @friendly
    def fix_these(self, spot_id, request: gr.Request) -> tuple:
        """Start making the failures again; returns what to follow and the timer started."""
        who = self.studio.who(request)
        spot = _id(spot_id, "spot")
        _, retries, out_of_tries = refining.fix(self.studio.ctx, self.studio.engine,
                                                who.business_id, spot)  # fmt: skip
        if not retries:
            text = "Nothing to make again."
            if out_of_tries:
                text += " Some still fail after every try: look at them yourself."
            return text, None, gr.Button(interactive=False), gr.skip()
        follow = {"spot": spot, "retries": [r.retry for r in retries], "began": time.time()}
        text = f"Making {len(retries)} variant{'s' if len(retries) > 1 else ''} again…"
        return text, follow, gr.Button(interactive=False), gr.Timer(active=True)

    @friendly
    def fix_tick(self, follow: dict | None, request: gr.Request) -> tuple:
        """The timer: how many are made again; once all are, their review, and the timer off."""
        if not follow:
            return gr.skip(), gr.skip(), gr.Timer(active=False)
        who = self.studio.who(request)
        retries = [int(i) for i in follow["retries"]]
        done, total = refining.made(self.studio.ctx, who.business_id, retries)
        if done < total:
            return f"Made again: {done} of {total}…", gr.skip(), gr.skip()
        result = review_spot(self.studio.ctx, self.studio.engine, who.business_id,
                             _id(follow["spot"], "spot"), variant_ids=retries)  # fmt: skip
        passed = sum(v.passed for v in result.variants)
        head = f"Made again: {passed} of {total} now pass."
        return (head + "\n\n" + flags(result, heading=False), gr.Button(interactive=True),
                gr.Timer(active=False))  # fmt: skip

    # Agents ----------------------------------------------------------------------------------

    @friendly
    def review_variants(self, spot_id: int, request: gr.Request) -> dict:
        """The spot's review: {"variants": [{"id", "geography", "audience", "passed",
        "checks": {NAME: {"passed", "score", "why"}}}]}."""
        return self._review(spot_id, request).to_dict()

    @friendly
    def fix_variants(self, spot_id: int, idempotency_key: str, request: gr.Request) -> dict:
        """Review the spot and start making its failures again: {"retries": [{"variant",
        "retry", "geography", "audience", "attempt", "because", "changed", "passed"}],
        "out_of_tries": [ids]}. The same idempotency key asked again answers the same, starting
        nothing more."""
        who = self.studio.who(request)
        spot = _id(spot_id, "spot")

        def fix() -> dict:
            _, retries, out_of_tries = refining.fix(self.studio.ctx, self.studio.engine,
                                                    who.business_id, spot)  # fmt: skip
            return {"retries": [r.to_dict() for r in retries], "out_of_tries": out_of_tries}

        return answered(self.studio.ctx, who.business_id, f"fix_variants:{spot}",
                        idempotency_key, fix)  # fmt: skip

    @friendly
    def fix_progress(self, retries: list[int], request: gr.Request) -> dict:
        """How many of these retries are made: {"made", "of"}; review_variants then shows
        them standing in for what failed."""
        done, total = refining.made(self.studio.ctx, self.studio.business(request),
                                    [int(i) for i in retries])  # fmt: skip
        return {"made": done, "of": total}

    def _review(self, spot_id, request: gr.Request) -> SpotReview:
        who = self.studio.who(request)
        return review_spot(self.studio.ctx, self.studio.engine, who.business_id,
                           _id(spot_id, "spot"))  # fmt: skip


def flags(result: SpotReview, *, heading: bool = True) -> str:
    """What needs a look, a line per variant that failed: place · audience, then each failed
    check in words with its reason."""
    failed = [v for v in result.variants if not v.passed]
    lines = []
    if heading:
        took = f"checked in {result.seconds:.0f} s"
        if not failed:
            return f"All {_counted(result)} pass every check ({took})."
        lines.append(f"**{len(failed)} of {_counted(result)} need a look** ({took}):")
    for v in failed:
        where = "The spot as briefed" if v.geography == "as briefed" else v.geography
        problems = "; ".join(f"{NAMES[n]}: {v.checks[n].why}" for n in v.failed)
        kept = " (approved: left as it is)" if v.status == "approved" else ""
        lines.append(f"- {md(where)} · {md(v.audience)}{kept}: {md(problems)}")
    return "\n".join(lines)


def _counted(result: SpotReview) -> str:
    """The versions reviewed in words: the gallery shows the personalised variants only, so
    the spot as briefed, reviewed with them, is named apart."""

    def variants(n: int) -> str:
        return f"{n} variant{'' if n == 1 else 's'}"

    total = len(result.variants)
    personalised = sum(v.geography != "as briefed" for v in result.variants)
    if personalised == total:
        return variants(total)
    if not personalised:
        return "1 version (the spot as briefed)"
    return f"{total} versions (the spot as briefed and {variants(personalised)})"


def _fixable(result: SpotReview) -> list[int]:
    return [v.id for v in result.variants if not v.passed and v.status not in refining.UNTOUCHED]
