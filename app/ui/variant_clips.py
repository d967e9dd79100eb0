"""Watch before paying: variants played as their preview clips (rendered on demand at the
preview tier, watermarked, by the app's worker): two side by side in Compare ("Play both"),
or up to GRID at once in a grid on Personalize ("Watch these"). A start returns what to
follow, as the spot's preview does, and the page's timer reads where the clips stand; an agent
calls play_variants, then clips_progress."""

from __future__ import annotations

import time

import gradio as gr

from app.services import jobs, renders, variants
from app.ui.studio import (
    GALLERY_MAX,
    WATCH_S,
    Studio,
    _elapsed,
    _id,
    _job_status,
    _live,
    friendly,
    stopped,
)
from app.ui.text import plain, refused

GRID = 8  # clips one click asks for: each is a preview render of about half a minute on a CPU
Clip = tuple[str, str]  # the clip as this session may fetch it, and its caption


class VariantClips:
    def __init__(self, studio: Studio):
        self.studio = studio

    @friendly
    def play_variants(self, variant_ids: list[int], request: gr.Request) -> tuple:
        """Start the preview clips of these variants (up to GRID); returns a line saying where
        they stand, the clips made so far (path and caption) and what to follow with
        clips_progress."""
        who = self.studio.who(request)
        status, made, follow = self._clips(who, self._start(who, variant_ids))
        return status, list(made.values()), follow

    @friendly
    def clips_progress(self, follow: dict | None, request: gr.Request) -> tuple:
        """Where the clips stand (one short read), given what play_variants returned: a line,
        the clips made so far, and what to follow next."""
        status, made, follow = self._clips(self.studio.who(request), _checked(follow))
        return status, list(made.values()), follow

    # Personalize: a grid ----------------------------------------------------------------------

    @friendly
    def watch_these(self, spot_id, geography, audience, request: gr.Request) -> tuple:
        """The clips of the gallery's first GRID ready variants (as it is filtered)."""
        who = self.studio.who(request)
        cards = variants.cards(
            self.studio.ctx, who.business_id, _id(spot_id, "spot"), personalized_only=True,
            limit=GALLERY_MAX,
            geography=None if geography in (None, "", "All") else geography,
            audience=None if audience in (None, "", "All") else audience,
        )  # fmt: skip
        chosen = [c.id for c in cards if c.status in ("ready", "approved")][:GRID]
        if not chosen:
            raise refused("No variants to watch yet: make them first.")
        status, made, follow = self._clips(who, self._start(who, chosen))
        return status, list(made.values()), follow

    @friendly
    def grid_tick(self, follow: dict | None, request: gr.Request) -> tuple:
        if not _live(follow):
            return gr.skip(), gr.skip(), gr.skip(), stopped()
        status, made, follow = self._clips(self.studio.who(request), _checked(follow))
        return status, list(made.values()), follow, gr.skip() if follow["live"] else stopped()

    # Compare: two side by side ----------------------------------------------------------------

    @friendly
    def play_pair(self, variant_a, variant_b, request: gr.Request) -> tuple:
        who = self.studio.who(request)
        follow = self._start(who, [variant_a, variant_b])
        status, made, follow = self._clips(who, follow)
        return status, *_pair(follow, made), follow

    @friendly
    def pair_tick(self, follow: dict | None, request: gr.Request) -> tuple:
        if not _live(follow):
            return gr.skip(), gr.skip(), gr.skip(), gr.skip(), stopped()
        status, made, follow = self._clips(self.studio.who(request), _checked(follow))
        if follow["live"]:
            return status, gr.skip(), gr.skip(), follow, gr.skip()
        return status, *_pair(follow, made), follow, stopped()

    # ------------------------------------------------------------------------------------------

    def _start(self, who, variant_ids: list) -> dict:
        """Queue each variant's preview (asked again, the same job) and what to follow: the
        variants in order, each with its job."""
        chosen = list(dict.fromkeys(_id(v, "variant") for v in variant_ids or []))
        if not 0 < len(chosen) <= GRID:
            raise refused(f"Choose from 1 to {GRID} variants to watch.")
        ctx, business = self.studio.ctx, who.business_id
        started = [[v, renders.enqueue(ctx, business, v, "preview")] for v in chosen]
        typical = renders.typical_seconds(ctx, business, "preview")
        return {"jobs": started, "typical": typical, "began": time.time(), "live": True}

    def _clips(self, who, follow: dict) -> tuple[str, dict[int, Clip], dict]:
        """A line, the clips made (by variant, in the follow's order), what to follow next."""
        ctx, business = self.studio.ctx, who.business_id
        made: dict[int, Clip] = {}
        waiting, failed = [], []
        for variant, job in follow["jobs"]:
            p = jobs.progress(ctx, business, job)  # another business's job: not found
            if p.state == "done" and (done := renders.latest(ctx, business, variant, "preview")):
                caption = variants.card(ctx, business, variant).caption
                path = self.studio._out(who, done.path, f"variant-{variant}-preview.mp4")
                made[variant] = (path, caption)
            elif p.state in ("failed", "cancelled"):
                failed.append(plain(p.error or "it was cancelled"))
            else:
                waiting.append(p)
        total = len(follow["jobs"])
        head = f"{len(made)} of {total} preview clip{'s' if total > 1 else ''} ready"
        if waiting:
            elapsed = _elapsed(follow)
            if elapsed > WATCH_S:
                raise refused("Still rendering after an hour: come back later.")
            # The clips render one after another: the next is due after those done and its own.
            due = follow["typical"] * (total - len(waiting) + 1)
            line = _job_status(waiting[0], elapsed, due, "next clip")
            return f"{head}. {line}", made, follow
        if failed:
            head += f"; {len(failed)} could not be made: {failed[0]}"
        return head + ".", made, {**follow, "live": False}


def _pair(follow: dict, made: dict[int, Clip]) -> tuple:
    """Compare's two videos: A's clip and B's (the same one when A is B)."""
    order = [variant for variant, _ in follow["jobs"]]
    a, b = order[0], order[-1]
    return (made[a][0] if a in made else None), (made[b][0] if b in made else None)


def _checked(follow: object) -> dict:
    """What a caller follows, as a start handed it out (its ids are checked again by every
    read); anything else is refused with a sentence."""
    shape = (
        isinstance(follow, dict)
        and set(follow) == {"jobs", "typical", "began", "live"}
        and isinstance(follow["jobs"], list)
        and 0 < len(follow["jobs"]) <= GRID
        and all(
            isinstance(pair, list) and len(pair) == 2 and all(type(i) is int for i in pair)
            for pair in follow["jobs"]
        )
        and all(isinstance(follow[k], int | float) for k in ("typical", "began"))
        and isinstance(follow["live"], bool)
    )
    if not shape:
        raise refused("Nothing to follow: pass what play_variants returned, as it returned it.")
    return follow
