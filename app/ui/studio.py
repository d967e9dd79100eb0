"""What each control of the studio does, for the signed-in user's business only.

Every handler takes the ids it acts on as plain inputs (a spot, a run, an order), so the same
function is a button in the page and a named endpoint for gradio_client. Long work (renders,
variant runs, finals) is queued for the app's worker, and no handler waits for it: the one that
starts it returns at once, with what to follow: the job, run or order, when it began and what
was last shown, as a small dict ("live" until the work is done). Each read of where the work
stands (the queue position, progress, an estimate, results as they arrive) is then a short call
of its own, given that dict and answering it updated: the page's timer makes one every second or
so, a script calls preview_progress, variants_progress or order_progress. The dict is only ids
and times the caller holds; every read is answered for the signed-in business alone.
"""

from __future__ import annotations

import functools
import logging
import re
import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from app.services import (
    AppContext,
    accounts,
    audience_copy,
    brand_kits,
    bulk,
    businesses,
    copy_edits,
    delivery,
    jobs,
    library,
    orders,
    pictures,
    renders,
    setting_words,
    spots,
    user_errors,
    variants,
)
from app.services.errors import UploadRefused
from app.services.matrix import plan_matrix
from app.services.text_rules import limit
from app.ui.session import token_of
from app.ui.text import md, refused

log = logging.getLogger(__name__)
CANDIDATES = 3  # backgrounds shown at a time
RESUMED = 26  # what resume updates: web.py's `opened` (23) and variant `choices` (3)
GALLERY_MAX = 120  # variant frames shown at once (filter by place or audience for others)
WORDS = ["Audience", "Line", "Your words", "Proposed", "Airs"]  # the words table's columns
UNEXPECTED = "Something went wrong on our side (reference {ref}). Please try again."
APPROVE = "Approve and purchase"  # the order's button; once quoted, with its price
WATCH_S = 3600  # a page follows long work this long, then leaves it to finish unwatched
RECONCILE_S = 30.0  # a followed run's jobs the queue gave up on are looked for this often
# What each kind of follow holds, and the start that hands it out.
FOLLOWS: dict[str, tuple[str, dict[str, type | tuple[type, ...]]]] = {
    "preview": (
        "render_preview",
        {"job": int, "variant": int, "spot": int, "began": float, "typical": float},
    ),
    "variants": (
        "make_variants",
        {
            "run": str,
            "spot": int,
            "began": float,
            "first": int,
            "estimate": float,
            "shown": (int, type(None)),  # the ready variants the gallery last sent showed
            "reconciled": float,
        },
    ),
    "order": ("approve", {"order": int, "began": float, "typical": float}),
}
CHANGED_SINCE_PREVIEW = (
    "Your spot has changed since its last preview. Render the preview again to see it as it is."
)
STILL_WORKING = (
    "Still working on it after an hour. It goes on without this page: come back later "
    "(Library, or Check order)."
)


def friendly(fn: Callable) -> Callable:
    """Errors a user can cause become their own sentence in the page; anything else is logged
    under a reference and shown as a plain apology with it, never a path or a stack trace."""

    def translate(exc: Exception) -> gr.Error:
        if isinstance(exc, user_errors()):  # the user's to fix: no traceback in the log
            return refused(exc)
        ref = secrets.token_hex(4)
        log.exception("reference %s: %s failed", ref, fn.__name__)
        return refused(UNEXPECTED.format(ref=ref))

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Exception as exc:
            raise translate(exc) from None

    return call


@dataclass(frozen=True)
class Catalog:
    templates: list[tuple[str, str]]
    geographies: list[str]
    audiences: list[str]


class Studio:
    def __init__(self, ctx: AppContext, engine):
        self.ctx, self.engine = ctx, engine

    def catalog(self) -> Catalog:
        builtin = library.builtin_names()
        templates = [(t.name, t.id) for t in spots.template_choices(self.ctx)]
        return Catalog(templates, builtin[0], builtin[1])

    # Who is asking -------------------------------------------------------------------------

    def who(self, request: gr.Request | None) -> accounts.Account:
        """The signed-in account of the session that sent this request."""
        token = None if request is None else token_of(request.headers, request.cookies)
        account = accounts.account_for(self.ctx, token)
        if account is None:
            raise refused("Your session has ended: sign in again.")
        return account

    def business(self, request: gr.Request | None) -> int:
        return self.who(request).business_id

    def _out(self, who: accounts.Account, source, name: str) -> str:
        """A file (or picture) this response shows: published for this session alone."""
        return str(self.ctx.responses.publish(who, source, name))

    @friendly
    def welcome(self, request: gr.Request) -> str:
        account = self.who(request)
        return f"**{md(account.business_name)}** · signed in as {md(account.email)}"

    @friendly
    def business_name(self, request: gr.Request) -> str:
        return self.who(request).business_name

    @friendly
    def rename_business(self, name: str | None, request: gr.Request) -> tuple[str, str]:
        """Rename the business (a typo at sign-up is on every end card): the page's header, and
        what changes."""
        view = businesses.rename(self.ctx, self.business(request), name or "")
        return self.welcome(request), (
            f"Saved. Spots you make from now on end on **{md(view.name)}**; a spot made already "
            "keeps the name it was made with (send its brief again to make it anew)."
        )

    @friendly
    def spot_label(self, spot_id: int | None, request: gr.Request) -> str:
        if not spot_id:
            return "No spot yet: start with the brief."
        view = spots.spot_view(self.ctx, self.business(request), _id(spot_id, "spot"))
        name = dict((i, n) for n, i in self.catalog().templates).get(view.template_id, "")
        return f"Working on **{md(view.campaign_name)}** · {md(name)} · {view.duration} s"

    # Brief ---------------------------------------------------------------------------------

    @friendly
    def templates(
        self, duration: int | str | None, chosen: str | None, request: gr.Request
    ) -> tuple[list, gr.Dropdown]:
        """The templates of a length; the one `chosen` stays chosen where it has that length
        (an opened spot's), else Product hero or the first."""
        who = self.who(request)
        choices = spots.template_choices(self.ctx, _length(duration))
        gallery = [
            (
                self._out(who, t.thumbnail, t.thumbnail.name),
                f"{t.name} · {t.duration} s — {t.use_case}",
            )
            for t in choices
        ]
        ids = [t.id for t in choices]
        value = next((t for t in (chosen, "product-hero") if t in ids), ids[0] if ids else None)
        dropdown = gr.Dropdown(choices=[(t.name, t.id) for t in choices], value=value)
        return gr.Gallery(value=gallery, label=_templates_label(self.ctx, duration)), dropdown

    @friendly
    def pick_template(self, duration: int | str | None, evt: gr.SelectData) -> str:
        choices = spots.template_choices(self.ctx, _length(duration))
        return choices[evt.index].id

    @friendly
    def template_note(self, template_id: str | None) -> str:
        """What the chosen template shows, and what it leaves out, before anything is typed."""
        return spots.template_note(template_id) if template_id else ""

    @friendly
    def brief_notes(self, spot_id: int | None, request: gr.Request) -> str:
        """Once the spot is made, what its template leaves out of the brief (and a missing
        logo), said on the brief page rather than dropped silently."""
        view = spots.spot_view(self.ctx, self.business(request), _id(spot_id, "spot"))
        notes = "\n\n".join(f"⚠ {note}" for note in view.notes)  # our sentences, no user text
        return notes or spots.template_note(view.template_id)

    @friendly
    def brand_kit(self, request: gr.Request) -> dict:
        """The business's brand kit, which every new brief starts from: its colours, web
        address, phone and tagline, and the names of its saved logo and fonts."""
        return brand_kits.brand_kit(self.ctx, self.business(request)).as_json()

    @friendly
    def prefill(self, request: gr.Request) -> tuple:
        """The brief's brand colours and details, from the kit; and whether the saved logo and
        fonts will be used (an upload replaces them). A kit of defaults changes nothing, so what
        is typed while the page loads is never overwritten by the same defaults."""
        kit = brand_kits.brand_kit(self.ctx, self.business(request))
        if kit == brand_kits.BrandKit():
            return (gr.update(),) * 6
        note = brand_kits.saved_files_note(kit)
        return *kit.primary_and_accent(), kit.cta_url, kit.phone, kit.tagline, note

    @friendly
    def copy_note(self, template_id: str | None, *words: str | None) -> str:
        """The brief's words that the chosen template has no room for, as they are typed."""
        if not template_id:
            return ""
        fields = dict(zip(spots.ON_SCREEN, (w or "" for w in words), strict=True))
        return spots.copy_note(template_id, fields)

    @friendly
    def voiceover_note(self, voiceover: str | None, duration: int | str | None) -> str:
        """The voice-over's spoken length against the spot's room, as it is typed."""
        return spots.voiceover_note(voiceover, _length(duration) or 15)

    @friendly
    def setting_note(self, setting: str | None) -> str:
        """The words of "Where it is set" the model leaves out, as they are typed."""
        return md(setting_words.left_out_note(self.engine, self.ctx.settings.model, setting or ""))

    def setting_suggestions(self) -> list[str]:
        """Settings the model draws every word of, for the page to offer."""
        return setting_words.suggestions(self.engine, self.ctx.settings.model)

    @friendly
    def create_spot(
        self,
        campaign_name: str,
        objective: str,
        template_id: str,
        product_photos: list[str] | None,
        primary_colour: str,
        accent_colour: str,
        product_name: str,
        headline: str,
        body: str,
        offer: str,
        cta_text: str,
        cta_url: str,
        phone: str,
        tagline: str,
        setting: str,
        logo: str | None = None,
        heading_font: str | None = None,
        body_font: str | None = None,
        voiceover: str = "",
        music: str = "",
        music_file: str | None = None,
        background: str | int | None = None,
        focus: str | None = None,
        photos_of: str | int | None = None,
        request: gr.Request = None,
    ) -> tuple[int, list, str]:
        """Create the campaign and its spot from the brief; returns the spot's id and storyboard.
        Through the API, every field but the campaign's name and the photos has a default (the
        page's); the template decides which copy it needs. `photos_of`: a spot of the
        business's (the page's open one) whose product photos stand in where none is
        uploaded."""
        who = self.who(request)
        uploads = [*(product_photos or []), logo, heading_font, body_font, music_file]
        try:
            spot = self._create_spot(
                who,
                campaign_name,
                objective,
                template_id,
                product_photos,
                primary_colour,
                accent_colour,
                {
                    "product_name": product_name,
                    "headline": headline,
                    "body": body,
                    "offer": offer,
                    "cta_text": cta_text,
                    "cta_url": cta_url,
                    "phone": phone,
                    "tagline": tagline,
                    "setting": setting,
                },
                logo,
                heading_font,
                body_font,
                music_file,
                voiceover=voiceover or "",
                music=music or "",
                background=_backdrop(background, focus),
                photos_of=None if photos_of in (None, "", 0) else _id(photos_of, "spot"),
            )
        except UploadRefused:  # a file to replace: none is kept
            self.ctx.responses.discard_uploads(who, uploads)
            raise
        # Stored, the uploads are not needed again. A brief refused for its words keeps them
        # for the corrected brief (the page still shows them); the sweep removes any never sent.
        self.ctx.responses.discard_uploads(who, uploads)
        gr.Info("Your spot is made. Check its storyboard, then render a preview.")
        gallery, table = self._storyboard(who, spot.id)
        return spot.id, gallery, table

    def _create_spot(
        self, who, campaign_name, objective, template_id, photos, primary, accent, copy, *files,
        voiceover: str, music: str, background: pictures.Backdrop | None, photos_of: int | None,
    ) -> spots.SpotView:  # fmt: skip
        def upload(path: str) -> Path:  # only this session's uploads, never a served file
            return self.ctx.responses.upload(path, who)

        logo, heading_font, body_font, music_file = (
            None if p is None else upload(p) for p in files
        )
        form = spots.BriefForm(
            campaign_name=campaign_name or "",
            objective=objective or "",
            template_id=template_id or "",
            copy=copy,
            colors=[_hex(primary), _hex(accent)],
            product_photos=[upload(p) for p in photos or []],
            logo=logo,
            heading_font=heading_font,
            body_font=body_font,
            voiceover=voiceover,
            music=music,
            music_file=music_file,
            background=background,
            photos_of=photos_of,
        )
        return spots.create_spot(self.ctx, who.business_id, form)

    # Storyboard ----------------------------------------------------------------------------

    @friendly
    def storyboard(self, spot_id: int | None, request: gr.Request) -> tuple[list, str]:
        return self._storyboard(self.who(request), _id(spot_id, "spot"))

    def _storyboard(self, who: accounts.Account, spot_id: int) -> tuple[list, str]:
        cards = spots.storyboard(self.ctx, self.engine, who.business_id, spot_id)
        gallery = [
            (
                self._out(who, c.still, f"scene-{c.index + 1}"),
                f"{c.index + 1}. {c.title} · {c.start:g}–{c.start + c.duration:g} s",
            )
            for c in cards
        ]
        rows = ["| Scene | Time | Copy |", "|---|---|---|"]
        for c in cards:
            words = " / ".join(md(t) for t in c.copy.values() if t) or "(brand card)"
            rows.append(
                f"| {c.index + 1}. {c.title} | {c.start:g}–{c.start + c.duration:g} s | {words} |"
            )
        return gallery, "\n".join(rows)

    @friendly
    def reorder_scenes(
        self, spot_id: int | None, order: str | None, request: gr.Request
    ) -> tuple[list, str]:
        """Put the scenes in another order, written as their numbers: "1, 3, 2, 4"."""
        who = self.who(request)
        spot_id = _id(spot_id, "spot")
        words = (order or "").replace(",", " ").split()
        if not words or not all(w.isdigit() and len(w) < 4 for w in words):
            raise refused("Write the scene numbers in the new order, e.g. 1, 3, 2, 4.")
        numbers = [int(w) - 1 for w in words]
        spots.reorder_scenes(self.ctx, self.engine, who.business_id, spot_id, numbers)
        return self._storyboard(who, spot_id)

    def pick_scene(self, evt: gr.SelectData) -> int:
        """A scene clicked on the storyboard is the one its buttons then act on."""
        return evt.index + 1

    @friendly
    def regenerate_scene(
        self, spot_id: int | None, scene: int | None, request: gr.Request
    ) -> tuple[list, str]:
        """Draw a new background for one scene (its number in the spot), the others kept."""
        who = self.who(request)
        spot_id = _id(spot_id, "spot")
        position = _id(scene, "scene") - 1
        spots.regenerate_scene(self.ctx, self.engine, who.business_id, spot_id, position)
        return self._storyboard(who, spot_id)

    @friendly
    def set_scene_picture(
        self,
        spot_id: int | None,
        scene: int | None,
        picture: str | int | None,
        focus: str | None,
        request: gr.Request,
    ) -> tuple[list, str]:
        """Set one scene (its number in the spot) in one of the business's pictures, or back
        in the spot's background."""
        who = self.who(request)
        spot_id = _id(spot_id, "spot")
        position = _id(scene, "scene") - 1
        chosen = _backdrop(picture, focus)
        spots.set_scene_picture(self.ctx, self.engine, who.business_id, spot_id, position, chosen)
        return self._storyboard(who, spot_id)

    @friendly
    def background_candidates(
        self, spot_id: int | None, round_: int | None, request: gr.Request
    ) -> tuple[list, int]:
        """Candidate backgrounds for the spot's setting; each further round shows new ones."""
        who = self.who(request)
        round_ = _count(round_, "round")
        first = round_ * CANDIDATES
        made = spots.background_candidates(
            self.ctx,
            self.engine,
            who.business_id,
            _id(spot_id, "spot"),
            seeds=range(first, first + CANDIDATES),
        )
        gallery = [
            (self._out(who, path, f"background-{seed}{path.suffix}"), f"Option {n}")
            for n, (seed, path) in enumerate(made, 1)
        ]
        return gallery, round_

    @friendly
    def pick_candidate(self, round_: int | None, evt: gr.SelectData) -> tuple[int, str]:
        """The background clicked (its seed, kept out of sight) and a sentence saying which."""
        seed = _count(round_, "round") * CANDIDATES + evt.index
        return seed, f"Option {evt.index + 1} picked: use it, or pick another."

    @friendly
    def choose_background(
        self, spot_id: int | None, seed: int | None, request: gr.Request
    ) -> tuple[list, str, str]:
        """Make background `seed` the spot's; returns the storyboard drawn over it."""
        who = self.who(request)
        spot_id = _id(spot_id, "spot")
        if seed is None:
            raise refused("Pick a background first.")
        seed = _count(seed, "background")
        spots.choose_background(self.ctx, self.engine, who.business_id, spot_id, seed)
        gallery, table = self._storyboard(who, spot_id)
        return gallery, table, "Your spot now uses this background."

    # Preview -------------------------------------------------------------------------------

    @friendly
    def render_preview(self, spot_id: int | None, request: gr.Request) -> tuple:
        """Start rendering the spot as briefed, small and watermarked, and return at once: where
        it stands, the video and its scene thumbnails if it is made already, and the job (to
        cancel it). Follow it with preview_progress, in the same session."""
        who = self.who(request)
        business = who.business_id
        spot_id = _id(spot_id, "spot")
        base = spots.base_variant(
            self.ctx,
            self.engine,
            business,
            spot_id,
            preset=self.ctx.settings.model,
            recipe="balanced",
        )
        job = renders.enqueue(self.ctx, business, base, "preview")
        follow = _started(
            "preview",
            job=job,
            variant=base,
            spot=spot_id,
            typical=renders.typical_seconds(self.ctx, business, "preview"),
        )
        status, video, thumbnails, follow = self._preview(who, follow)
        return status, video, thumbnails, job, follow

    @friendly
    def preview_progress(self, follow: dict | None, request: gr.Request) -> tuple:
        """Where a preview stands (one short read), given what render_preview returned to follow
        it; once it is made, the video and its scene thumbnails. Returns what to follow next."""
        who = self.who(request)
        return self._preview(who, _follow(follow, "preview"))

    @friendly
    def preview_tick(self, follow: dict | None, request: gr.Request) -> tuple:
        """The page's timer: preview_progress, and the timer stopped once the preview is made."""
        if not _live(follow):
            return (*(gr.skip(),) * 4, stopped())
        shown = self.preview_progress(follow, request)
        return *shown, _timer(shown[-1])

    def _preview(self, who: accounts.Account, follow: dict) -> tuple:
        business = who.business_id
        base, _ = renders.spot_preview(self.ctx, business, follow["spot"])
        if base != follow["variant"]:  # the spot changed since: this is not its preview
            return CHANGED_SINCE_PREVIEW, None, None, {**follow, "live": False}
        p = jobs.progress(self.ctx, business, follow["job"])
        if p.state == "failed":
            raise refused(f"The render failed: {p.error}")
        if p.state == "cancelled":
            raise refused("Cancelled.")
        if p.state != "done":
            elapsed = _elapsed(follow)
            if elapsed > WATCH_S:
                raise refused(STILL_WORKING)
            return _job_status(p, elapsed, follow["typical"], "preview"), None, None, follow
        done = renders.latest(self.ctx, business, follow["variant"], "preview")
        if done is None:  # a render job is done once its render is stored
            raise RuntimeError(f"preview job {p.job_id} is done but no render was stored")
        return *self._shown_preview(who, follow["spot"], done), {**follow, "live": False}

    @friendly
    def spot_preview(self, spot_id: int | None, follow: dict | None, request: gr.Request):
        """The newest preview of the spot as it now stands, as it was when made: on opening a
        spot (a returning owner's, a campaign from the Library) and whenever its storyboard
        changes (another background, another order), which makes a new base. A preview of
        another spot, or of this one as it was, is no longer followed here (its job goes on),
        so it cannot land under the spot as it is; the page says to render it again. What is
        followed is left alone unless it is such a one: a render started since this was asked
        for is the page's to follow."""
        if spot_id in (None, "", 0):
            return "", None, None, gr.skip(), gr.skip()
        spot_id = _id(spot_id, "spot")
        who = self.who(request)
        base, done = renders.spot_preview(self.ctx, who.business_id, spot_id)
        shown = isinstance(follow, dict) and follow.get("spot") == spot_id
        if shown and follow.get("variant") == base and _live(follow):
            return (gr.skip(),) * 5  # its own, on its way
        if done is not None:
            view = self._shown_preview(who, spot_id, done)
        elif shown and follow.get("variant") != base:
            view = (CHANGED_SINCE_PREVIEW, None, None)
        else:
            view = ("", None, None)
        if not _live(follow):
            return *view, gr.skip(), gr.skip()
        timer, ended = halted(follow)
        return *view, ended, timer

    def _shown_preview(self, who: accounts.Account, spot_id, done: renders.RenderView) -> tuple:
        """A made preview as the page shows it: where it stands, the video, its scenes."""
        thumbnails = [
            (self._out(who, picture, f"preview-scene-{i + 1}"), caption)
            for i, (picture, caption) in enumerate(
                renders.scene_thumbnails(self.ctx, who.business_id, done)
            )
        ]
        verdict = "passes" if done.qc_passed else "fails"
        status = f"Preview ready ({verdict} preview QC). Watch it, then personalize it."
        video = self._out(who, done.path, f"spotforge-spot{spot_id}-preview.mp4")
        return status, video, thumbnails

    @friendly
    def cancel_job(self, job_id: int | None, request: gr.Request) -> str:
        if job_id is None:
            return "Nothing to cancel."
        p = jobs.cancel(self.ctx, self.business(request), _id(job_id, "job"))
        return {
            "cancelled": "Cancelled.",
            "running": "It had already started: it will finish, and you can ignore it.",
        }.get(p.state, f"Nothing to cancel: it is {p.state}.")

    # Personalize ---------------------------------------------------------------------------

    @friendly
    def library_choices(self, request: gr.Request) -> tuple[gr.CheckboxGroup, ...]:
        places, people = self._library_names(self.business(request))
        return (
            gr.CheckboxGroup(choices=places),
            gr.CheckboxGroup(choices=people),
            gr.Dropdown(choices=["All", *places], value="All"),
            gr.Dropdown(choices=["All", *people], value="All"),
        )

    @friendly
    def last_choice(self, spot_id: int | None, request: gr.Request) -> tuple:
        """A spot opened again: the places and audiences of its newest run ticked again, so an
        owner back to add a place starts from what they chose (and sees its words per
        audience). A spot without variants leaves the ticks as they are."""
        if not spot_id:
            return gr.skip(), gr.skip()
        business = self.business(request)
        ticked = variants.last_choice(self.ctx, business, _id(spot_id, "spot"))
        if not ticked[0]:
            return gr.skip(), gr.skip()
        # With the choices: this may arrive before the page's first read of the library.
        return tuple(
            gr.CheckboxGroup(choices=names, value=chosen)
            for names, chosen in zip(self._library_names(business), ticked, strict=True)
        )

    def _library_names(self, business: int) -> tuple[list[str], list[str]]:
        places = [g.name for g in library.geographies(self.ctx, business)]
        return places, [a.name for a in library.audiences(self.ctx, business)]

    @friendly
    def plan_variants(
        self,
        spot_id: int | None,
        geographies: list[str] | None,
        audiences: list[str] | None,
        request: gr.Request,
    ) -> str:
        """How many variants the choice makes and about how long they take."""
        business = self.business(request)
        if not geographies or not audiences:
            return "Choose at least one place and one audience."
        plan = self._plan(business, _id(spot_id, "spot"), geographies, audiences)
        return (
            f"**{_counted(plan.variants, 'variant')}** ({_counted(len(plan.geographies), 'place')}"
            f" × {_counted(len(plan.audiences), 'audience')}), "
            f"{_counted(plan.backgrounds, 'background')} to make "
            f"({plan.backgrounds_cached} already made): about {_duration(plan.estimated_s)}."
        )

    def _plan(self, business: int, spot_id: int, geographies: list[str], audiences: list[str]):
        places = _by_name(library.geographies(self.ctx, business), geographies, "place")
        people = _by_name(library.audiences(self.ctx, business), audiences, "audience")
        return plan_matrix(
            self.ctx,
            self.engine,
            business,
            [spot_id],
            places,
            people,
            preset=self.ctx.settings.model,
        )

    @friendly
    def copy_proposals(
        self, spot_id: int | None, audiences: list[str] | None, request: gr.Request
    ) -> list[list[str]]:
        """Per audience and line (WORDS): your words, the line proposed for that audience, and
        what airs (your words until you choose another). Change "Airs" and send the rows to
        decide_copy, or to make_variants."""
        business = self.business(request)
        if not audiences:
            return []
        people = _by_name(library.audiences(self.ctx, business), audiences, "audience")
        found = audience_copy.lines(self.ctx, business, _id(spot_id, "spot"), people)
        return [[x.audience, x.slot, x.yours, x.proposed, x.airs] for x in found]

    @friendly
    def decide_copy(
        self, spot_id: int | None, rows: list[list[str]] | None, request: gr.Request
    ) -> list[list[str]]:
        """Air each row's "Airs" (rows as copy_proposals gives them) for its audience; a blank,
        or your own words, airs yours. Returns the rows as they now stand."""
        business, spot_id = self.business(request), _id(spot_id, "spot")
        names = self._decide(business, spot_id, rows)
        return self.copy_proposals(spot_id, names, request)

    def _decide(self, business: int, spot_id: int, rows: list[list] | None) -> list[str]:
        """Store the words table's "Airs" column; returns its audiences. A table left empty (an
        API client that did not send one) decides nothing: what airs stays as it was."""
        rows = [row for row in rows or [] if any(cell not in (None, "") for cell in row)]
        if any(len(row) != len(WORDS) for row in rows):
            raise refused(f"Each row of words has {len(WORDS)} cells: {', '.join(WORDS)}.")
        names = list(dict.fromkeys(str(row[0]) for row in rows))
        found = _by_name(library.audiences(self.ctx, business), names, "audience")
        ids = dict(zip(names, found, strict=True))
        chosen: dict[int, dict[str, str]] = {}
        for audience, slot, _yours, _proposed, airs in rows:
            chosen.setdefault(ids[str(audience)], {})[slot] = airs
        audience_copy.decide(self.ctx, business, spot_id, chosen)
        return names

    @friendly
    def make_variants(
        self,
        spot_id: int | None,
        geographies: list[str] | None,
        audiences: list[str] | None,
        words: list[list[str]] | None = None,
        request: gr.Request = None,
    ) -> tuple:
        """Start making every variant and return at once: where the run stands, the frames
        made so far, and the run's key (to stop it). Follow it with variants_progress, in the
        same session. `words` (rows as copy_proposals gives them) is saved first, as
        decide_copy saves it; without it, what airs is what was chosen before (by default,
        your own words)."""
        who = self.who(request)
        business = who.business_id
        spot_id = _id(spot_id, "spot")
        if not geographies or not audiences:
            raise refused("Choose at least one place and one audience.")
        self._decide(business, spot_id, words)
        plan = self._plan(business, spot_id, geographies, audiences)
        run = bulk.start(self.ctx, self.engine, business, plan)
        first = bulk.run_status(self.ctx, business, run)
        follow = _started(
            "variants",
            run=run,
            spot=spot_id,
            first=first.ready + first.failed,
            estimate=float(plan.estimated_s),
            shown=None,
            reconciled=time.time(),
        )
        status, gallery, follow = self._variants(who, follow, first)
        return status, gallery, run, follow

    @friendly
    def variants_progress(self, follow: dict | None, request: gr.Request) -> tuple:
        """Where a run stands (one short read), given what make_variants returned to follow it,
        and its frames when more are ready than when last asked (else the gallery is left as it
        is); all of them once it is done. Returns what to follow next."""
        who = self.who(request)
        return self._variants(who, _follow(follow, "variants"))

    @friendly
    def variants_tick(self, follow: dict | None, request: gr.Request) -> tuple:
        """The page's timer: variants_progress; once the run is done, the variants to compare
        and buy, and the timer stopped."""
        if not _live(follow):
            return (*(gr.skip(),) * 6, stopped())
        status, gallery, follow = self.variants_progress(follow, request)
        if follow["live"]:
            return status, gallery, follow, *(gr.skip(),) * 3, gr.skip()
        return status, gallery, follow, *self.variant_choices(follow["spot"], request), stopped()

    @friendly
    def variants_started(self, follow: dict | None, request: gr.Request) -> tuple:
        """After make_variants, in the page: the timer started, or the variants to compare and
        buy if the run had nothing left to make."""
        if not follow:
            return (gr.skip(),) * 4
        follow = _follow(follow, "variants")
        if follow["live"]:
            return (*(gr.skip(),) * 3, gr.Timer(active=True))
        return (*self.variant_choices(follow["spot"], request), gr.skip())

    def _variants(
        self, who: accounts.Account, follow: dict, report: bulk.RunReport | None = None
    ) -> tuple:
        business, spot_id = who.business_id, follow["spot"]
        now, elapsed = time.time(), _elapsed(follow)
        if report is None:
            if now - follow["reconciled"] > RECONCILE_S:
                bulk.reconcile(self.ctx, business, follow["run"])
                follow = {**follow, "reconciled": now}
            report = bulk.run_status(self.ctx, business, follow["run"])
        if report.finished:
            done = {**follow, "live": False, "shown": report.ready}
            return _run_summary(report), self._gallery(who, spot_id), done
        if elapsed > WATCH_S:
            return STILL_WORKING, self._gallery(who, spot_id), {**follow, "live": False}
        gallery = gr.skip()
        if report.ready != follow["shown"]:  # a 120-card gallery only when it changed
            gallery = self._gallery(who, spot_id)
            follow = {**follow, "shown": report.ready}
        made = report.ready + report.failed - follow["first"]
        left = report.variants - report.ready - report.failed - report.cancelled
        eta = elapsed / made * left if made else follow["estimate"]
        status = (
            f"Making variants: {report.ready} of {report.variants} ready"
            f"{f', {report.failed} failed' if report.failed else ''}; about {_duration(eta)} "
            "left. You can leave this page: the work goes on."
        )
        return status, gallery, follow

    @friendly
    def cancel_variants(self, run: str | None, request: gr.Request) -> str:
        if not run:
            return "No run to stop."
        report = bulk.cancel(self.ctx, self.business(request), run)
        return f"Stopped: {report.ready} ready, {report.cancelled} not made. " + (
            "Start again to make the rest."
        )

    @friendly
    def variant_gallery(
        self,
        spot_id: int | None,
        geography: str | None,
        audience: str | None,
        request: gr.Request,
    ) -> list:
        """The spot's variants, filtered by place and audience ("All" for any)."""
        who = self.who(request)
        return self._gallery(who, _id(spot_id, "spot"), geography=geography, audience=audience)

    def _gallery(self, who, spot_id, *, geography=None, audience=None) -> list:
        found = variants.cards(
            self.ctx,
            who.business_id,
            spot_id,
            personalized_only=True,
            limit=GALLERY_MAX,
            geography=None if geography in (None, "", "All") else geography,
            audience=None if audience in (None, "", "All") else audience,
        )
        return [
            (self._out(who, c.picture, f"variant-{c.id}{c.picture.suffix}"), c.caption)
            for c in found
            if c.picture is not None
        ]

    @friendly
    def variant_choices(self, spot_id: int | None, request: gr.Request) -> tuple:
        business = self.business(request)
        ready = [
            c
            for c in variants.cards(self.ctx, business, _id(spot_id, "spot"), limit=GALLERY_MAX)
            if c.status in ("ready", "approved")
        ]
        choices = [(c.caption, c.id) for c in ready]
        # Side by side first: the newest two variants made for a place and an audience (a
        # spot's bases are all "as briefed", and the first has no picture until one is made).
        first = [c.id for c in ready if c.personalized][-2:] or [c.id for c in ready][-2:]
        a, b = (first[0], first[-1]) if first else (None, None)
        return (
            gr.Dropdown(choices=choices, value=a),
            gr.Dropdown(choices=choices, value=b),
            gr.CheckboxGroup(choices=choices, value=[]),
        )

    # Compare -------------------------------------------------------------------------------

    @friendly
    def compare(self, variant_a: int | None, variant_b: int | None, request: gr.Request) -> tuple:
        """Two variants side by side: their spots at a glance and what made them."""
        who = self.who(request)
        out: list = []
        for variant_id in (variant_a, variant_b):
            c = variants.card(self.ctx, who.business_id, _id(variant_id, "variant"))
            shown = c.picture
            out += [
                None if shown is None else self._out(who, shown, f"variant-{c.id}{shown.suffix}"),
                f"**{md(c.caption)}**  \nHeadline: {md(c.headline)}",
            ]
        return tuple(out)

    @friendly
    def variant_words(self, variant_id: int | None, slot: str | None, request: gr.Request):
        """The edit box filled with the variant's words in that line, as its limit allows."""
        if variant_id in (None, "") or slot not in copy_edits.EDITABLE:
            return gr.skip()
        found = copy_edits.words(self.ctx, self.business(request), _id(variant_id, "variant"))
        return gr.Textbox(value=found[slot], max_length=limit(slot))

    @friendly
    def edit_variant_copy(
        self, variant_id: int | None, slot: str | None, text: str | None, request: gr.Request
    ) -> str:
        """A new variant with this line of the variant's words changed (any line on screen,
        the call to action and contact details included), a child of it in the lineage; its
        frame is made right away."""
        parent = _id(variant_id, "variant")
        business = self.business(request)
        child = copy_edits.edit_copy(self.ctx, business, parent, {slot: text})
        caption = variants.card(self.ctx, business, child).caption
        return (
            f"Saved as a new variant, “{md(caption)}”: its frame is being made. Choose it as "
            "variant A to compare it once it is ready."
        )

    # Approve, purchase, download -----------------------------------------------------------

    @friendly
    def quote(
        self,
        variant_ids: list[int] | None,
        shapes: list[str] | None = None,
        destinations: list[str] | None = None,
        request: gr.Request = None,
    ) -> tuple[int, str]:
        """A quote for the chosen variants, each in every shape (16:9, 9:16, 1:1; default
        16:9) for every destination (default broadcast): returns the order's id and the
        price."""
        chosen = [_id(v, "variant") for v in variant_ids or []]
        business = self.business(request)
        order = orders.quote(
            self.ctx,
            business,
            chosen,
            shapes=shapes if shapes is not None else ("16:9",),
            destinations=destinations if destinations is not None else ("broadcast",),
        )
        return order.id, self._order_text(business, order)

    @friendly
    def approve(self, order_id: int | None, request: gr.Request) -> tuple:
        """Approve the quote (the purchase) and start rendering the finals; returns at
        once where the order stands, with the files and their QC reports if it is delivered
        already (else see order_status)."""
        who = self.who(request)
        return self._follow_order(
            who, orders.approve(self.ctx, who.business_id, _id(order_id, "order"))
        )

    @friendly
    def retry_order(self, order_id: int | None, request: gr.Request) -> tuple:
        """Render again the finals of a failed order that failed or missed QC."""
        who = self.who(request)
        return self._follow_order(
            who, orders.retry(self.ctx, who.business_id, _id(order_id, "order"))
        )

    @friendly
    def cancel_order(self, order_id: int | None, request: gr.Request) -> tuple:
        """Withdraw an order that is not yet approved (or failed)."""
        who = self.who(request)
        return self._delivered(
            who, orders.cancel(self.ctx, who.business_id, _id(order_id, "order"))
        )

    @friendly
    def order_progress(self, follow: dict | None, request: gr.Request) -> tuple:
        """Where an order being rendered stands (one read), given what approve or retry_order
        returned to follow it; its files once it is delivered (or failed). Returns what to
        follow next."""
        who = self.who(request)
        follow = _follow(follow, "order")
        order = orders.status(self.ctx, who.business_id, follow["order"])
        return self._order(who, order, follow)

    @friendly
    def order_tick(self, follow: dict | None, request: gr.Request) -> tuple:
        """The page's timer: order_progress, and the timer stopped once the order is settled."""
        if not _live(follow):
            return (*(gr.skip(),) * 4, stopped())
        shown = self.order_progress(follow, request)
        return *shown, _timer(shown[-1])

    def _follow_order(self, who: accounts.Account, order: orders.OrderView) -> tuple:
        typical = renders.typical_seconds(self.ctx, who.business_id, "final")
        follow = _started("order", order=order.id, typical=typical * len(order.deliveries))
        return self._order(who, order, follow)

    def _order(self, who: accounts.Account, order: orders.OrderView, follow: dict) -> tuple:
        if order.status != "rendering":
            return (*self._delivered(who, order), {**follow, "live": False})
        elapsed = _elapsed(follow)
        if elapsed > WATCH_S:
            return STILL_WORKING, None, "", {**follow, "live": False}
        done = sum(d.qc_passed is not None for d in order.deliveries)
        left = max(follow["typical"] - elapsed, 0)
        return (
            f"Rendering the finals: {done} of {len(order.deliveries)} done, about "
            f"{_duration(left)} left. You can leave this page; Check order shows them.",
            None,
            "",
            follow,
        )

    @friendly
    def order_status(self, order_id: int | None, request: gr.Request) -> tuple:
        """Where an order stands, with its files once delivered."""
        who = self.who(request)
        order = orders.status(self.ctx, who.business_id, _id(order_id, "order"))
        return self._delivered(who, order)

    def _delivered(self, who: accounts.Account, order: orders.OrderView) -> tuple:
        text = self._order_text(who.business_id, order)
        if order.status not in ("delivered", "failed"):
            return text, None, ""
        if order.status == "delivered":
            return (text, *self._package(who, order))
        names = self._captions(who.business_id, order.variant_ids)
        links = []
        for d in order.deliveries:
            what = f"{md(names[d.variant_id])} · {d.shape}"
            if d.render_id is None:
                links.append(f"- {what}: not rendered — {md(d.error)}")
                continue
            links.append(
                f"- {what} ({_verdicts(d.verdicts)}): [QC report](/report/render/{d.render_id})"
            )
        return text, None, "\n".join(links)

    def _package(self, who: accounts.Account, order: orders.OrderView) -> tuple[list, str]:
        """A delivered order's files under the names they are filed by: the zip, then each
        master and its QC report, with the AI-imagery disclosure beside them."""
        business = who.business_id
        files: list[str] = []
        disclosure = "Every master carries C2PA Content Credentials saying how it was made."
        head = [f"**{delivery.DISCLOSURE}** {disclosure}"]
        if order.package_asset_id is not None:  # none for an order delivered before packages
            zipped = delivery.package_path(self.ctx, business, order.id)
            files.append(self._out(who, zipped.path, zipped.filename))
            where = f"/download/order/{order.id}/{zipped.filename}"
            head.append(f"[Download everything (zip)]({where})")
        links = []
        named = delivery.names(self.ctx, business, order)
        for shown, master in zip(named, delivery.masters(self.ctx, business, order), strict=True):
            files += [
                self._out(who, master.path, master.name),
                self._out(who, delivery.report(master), master.report_name),
            ]
            links.append(
                f"- [{master.name}](/download/order/{order.id}/{master.name}) "
                f"({_verdicts(shown.verdicts)}) · "
                f"[QC report](/report/render/{shown.render_id})"
            )
        return files, "\n\n".join(head) + "\n\n" + "\n".join(links)

    def _captions(self, business: int, variant_ids) -> dict[int, str]:
        return {v: variants.card(self.ctx, business, v).caption for v in variant_ids}

    def _order_text(self, business: int, order: orders.OrderView) -> str:
        names = self._captions(business, order.variant_ids).values()
        return _order_text(order, "; ".join(md(n) for n in names))

    @friendly
    def order_actions(self, order_id: int | None, request: gr.Request) -> tuple:
        """The page's order buttons: approve, render again and cancel, each enabled only while
        it applies to where the order stands; check, once there is an order. Approving names
        the price it pays."""
        status, pay = None, APPROVE
        if order_id:
            view = orders.status(self.ctx, self.business(request), _id(order_id, "order"))
            status = view.status
            if status == "quoted":
                pay = f"{APPROVE}: {view.quote_text}"
        return (
            gr.Button(value=pay, interactive=status == "quoted"),
            gr.Button(interactive=status == "failed"),
            gr.Button(interactive=status in ("quoted", "failed")),
            gr.Button(interactive=status is not None),
        )

    # Library -------------------------------------------------------------------------------

    @friendly
    def your_pictures(self, request: gr.Request) -> tuple:
        """The business's photos and clips, each by its file's name, and the same as choices
        of where a brief, a place or a scene is set."""
        return self._pictures(self.who(request))

    def _pictures(self, who: accounts.Account) -> tuple:
        found = pictures.pictures(self.ctx, who.business_id)
        gallery = [
            (self._out(who, pictures.thumbnail(p), f"picture-{i + 1}"), p.caption)
            for i, p in enumerate(found)
        ]
        choices = [(GENERATED, ""), *((p.name, str(p.asset_id)) for p in found)]
        return gallery, *(gr.Dropdown(choices=choices) for _ in range(3))

    @friendly
    def add_picture(self, file: str | None, request: gr.Request) -> tuple:
        """Add a photo or clip to the business's pictures; they are listed again with it."""
        who = self.who(request)
        if not file:
            raise refused("Choose a photo or clip to add.")
        try:
            added = pictures.upload(self.ctx, who.business_id, self.ctx.responses.upload(file, who))
        finally:
            self.ctx.responses.discard_uploads(who, [file])
        return *self._pictures(who), f"Added {md(added.name)} to your pictures."

    @friendly
    def set_place_picture(
        self, place: str | None, picture: str | int | None, focus: str | None, request: gr.Request
    ) -> str:
        """Set this business's variants in a place (by its name) in one of its pictures, or back
        in generated backgrounds."""
        who = self.who(request)
        if not place:
            raise refused("Choose a place.")
        chosen = _backdrop(picture, focus)
        library.set_geography_background(self.ctx, who.business_id, place, chosen)
        if chosen is None:
            return f"{md(place)}: generated backgrounds."
        name = next(p.name for p in pictures.pictures(self.ctx, who.business_id)
                    if p.asset_id == chosen.asset_id)  # fmt: skip
        return f"{md(place)} is set in {md(name)}."

    @friendly
    def campaigns(self, request: gr.Request) -> tuple[list[list], gr.Dropdown]:
        business = self.business(request)
        found = businesses.list_campaigns(self.ctx, business)
        # A Dataframe of str cells shows text as text; Markdown cells would need escaping.
        rows = [[c.name, c.objective, c.status, f"{c.created_at:%Y-%m-%d}"] for c in found]
        choices = [(f"{c.name} · {c.created_at:%Y-%m-%d}", c.id) for c in found]
        return rows, gr.Dropdown(choices=choices, value=choices[0][1] if choices else None)

    @friendly
    def lineage(self, campaign_id: int | None, request: gr.Request) -> str:
        """The campaign's spots and variants as a tree: each variant under what it came from."""
        if campaign_id is None:
            return "Choose a campaign."
        name, rows = variants.lineage(
            self.ctx, self.business(request), _id(campaign_id, "campaign")
        )
        lines = [f"**{md(name)}**"] + [f"{'  ' * r.depth}- {md(r.text)}" for r in rows]
        return "\n".join(lines)

    @friendly
    def campaign_variants(self, campaign_id: int | None, request: gr.Request) -> gr.Dropdown:
        """The campaign's variants by their names in words, to pick one to render again."""
        if campaign_id is None:
            return gr.Dropdown(choices=[], value=None)
        _, rows = variants.lineage(self.ctx, self.business(request), _id(campaign_id, "campaign"))
        choices = [(r.text, r.variant_id) for r in rows if r.variant_id is not None]
        return gr.Dropdown(choices=choices, value=None)

    @friendly
    def open_campaign(self, campaign_id: int | None, request: gr.Request) -> tuple:
        """Continue a campaign: its newest spot becomes the one every step works on."""
        who = self.who(request)
        spot_id = businesses.newest_spot(self.ctx, who.business_id, _id(campaign_id, "campaign"))
        return self._open(who, spot_id)

    def _open(self, who: accounts.Account, spot_id: int) -> tuple:
        """The spot on every step, its newest order (with its files) on the buy step, and its
        brief's words in the brief, so an owner who comes back sees what they wrote."""
        gallery, table = self._storyboard(who, spot_id)
        view = spots.spot_view(self.ctx, who.business_id, spot_id)
        order = orders.newest_for_spot(self.ctx, who.business_id, spot_id)
        bought = (None, "", None, "") if order is None else (order.id, *self._delivered(who, order))
        brief = view.brief
        words = (view.campaign_name, brief.product_name, brief.headline, brief.body, brief.offer,
                 brief.cta_text, brief.setting, brief.voiceover, view.objective, brief.cta_url,
                 brief.phone, brief.tagline, view.duration, view.template_id)  # fmt: skip
        working = f"Working on {md(view.campaign_name)}."
        return spot_id, gallery, table, working, *bought, *words, _photos_note(view)

    @friendly
    def photos_note(self, spot_id: int | None, request: gr.Request) -> str:
        """Under the brief's photos: whose product photo a brief sent with none added takes."""
        view = spots.spot_view(self.ctx, self.business(request), _id(spot_id, "spot"))
        return _photos_note(view)

    @friendly
    def resume(self, request: gr.Request) -> tuple:
        """A returning owner lands on their last campaign's newest spot, opened as "Open this
        campaign" opens it (with its variants to compare and buy); a new business on the blank
        brief."""
        who = self.who(request)
        spot_id = businesses.last_spot(self.ctx, who.business_id)
        if spot_id is None:
            return (gr.update(),) * RESUMED
        return *self._open(who, spot_id), *self.variant_choices(spot_id, request)

    @friendly
    def duplicate_campaign(self, campaign_id: int | None, request: gr.Request) -> str:
        copy = businesses.duplicate_campaign(
            self.ctx, self.business(request), _id(campaign_id, "campaign")
        )
        return f"Duplicated as {md(copy.name)}."

    @friendly
    def rerender(self, variant_id: int | None, request: gr.Request) -> str:
        """Render a variant's preview again from its stored parameters."""
        business = self.business(request)
        job = renders.enqueue(self.ctx, business, _id(variant_id, "variant"), "preview", again=True)
        p = jobs.progress(self.ctx, business, job)
        return f"Re-render queued ({p.position} ahead of it)."


def _photos_note(view: spots.SpotView) -> str:
    # Said of the photo kept, not of the box: right after a spot is made its upload still shows.
    return (
        f"**{md(view.campaign_name)}** (the campaign open now) keeps its product photo: a brief "
        "sent again with no photo added here uses it."
    )


GENERATED = "Generated from the words above"  # where a brief is set, unless a picture is chosen


def _backdrop(picture: str | int | None, focus: str | None) -> pictures.Backdrop | None:
    """A picture choice (its asset id as the control's value, "" for generated) and a focus
    point's name, as the services take them."""
    if picture in (None, ""):
        return None
    return pictures.Backdrop(_id(picture, "picture"), pictures.focus_of(focus))


def proposals_air(rows: list[list] | None) -> list[list]:
    """The words table with each proposal in "Airs" (the page's "Use the proposals")."""
    return [[*row[:4], row[3]] for row in rows or [] if len(row) == len(WORDS)]


def following(follow: dict | None):
    """A page's timer after a handler started work: running while there is something to
    follow."""
    return gr.Timer(active=True) if _live(follow) else gr.skip()


def stopped():
    """A page's timer stopped (the user stopped following, or a read failed)."""
    return gr.Timer(active=False)


def halted(follow: dict | None) -> tuple:
    """A page's timer stopped, and what it followed marked over (the user stopped it, or a
    read failed), so the buttons that depend on it are set back."""
    ended = {**follow, "live": False} if isinstance(follow, dict) else follow
    return stopped(), ended


def working(follow: dict | None) -> tuple:
    """Start and stop buttons for followed work: start while none goes on, stop while it does."""
    live = _live(follow)
    return gr.Button(interactive=not live), gr.Button(interactive=live)


def _timer(follow: dict):
    """A page's timer after a read: left running while there is more to follow, else stopped."""
    return gr.skip() if follow["live"] else stopped()


def _started(kind: str, **fields) -> dict:
    """What to follow of work that starts now."""
    return {"kind": kind, **fields, "began": time.time(), "live": True}


def _live(follow: object) -> bool:
    return isinstance(follow, dict) and follow.get("live") is True


def _follow(follow: object, kind: str) -> dict:
    """What a caller follows, as its start handed it out (the ids in it are checked again by
    every read); anything else is refused with a sentence."""
    start, fields = FOLLOWS[kind]
    expected = {"kind": str, **fields, "live": bool}
    if (
        not isinstance(follow, dict)
        or set(follow) != set(expected)
        or follow["kind"] != kind
        or not all(_is(follow[k], t) for k, t in expected.items())
    ):
        raise refused(f"Nothing to follow: pass what {start} returned, as it returned it.")
    for what in ("job", "variant", "spot", "order"):
        if what in follow:
            _id(follow[what], what)
    return follow


def _is(value: object, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if float in kinds:
        kinds = (*kinds, int)
    return any(isinstance(value, k) and (k is bool or not isinstance(value, bool)) for k in kinds)


def _elapsed(follow: dict) -> float:
    return max(time.time() - follow["began"], 0.0)


def _id(value: int | float | str | None, what: str) -> int:
    """An id as a page or a script sent it; ids start at 1 (an empty number field holds 0)."""
    if value in (None, "", 0):
        raise refused(f"Choose a {what} first." if what != "spot" else "Start with the brief.")
    number = _count(value, what)
    if number == 0:
        raise refused(f"Choose a {what} first.")
    return number


def _count(value: int | float | str | None, what: str) -> int:
    """A whole number from 0 that fits the database's integers, or a sentence saying why not."""
    if value in (None, ""):
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise refused(f"The {what} must be a whole number.")
    text = str(value).strip()
    if isinstance(value, float) and value.is_integer():
        text = str(int(value))
    if not text.isdigit() or not text.isascii():
        raise refused(f"The {what} must be a whole number.")
    number = int(text)
    if number >= 2**31:
        raise refused(f"There is no {what} {number}.")
    return number


def _templates_label(ctx: AppContext, duration: int | str | None) -> str:
    """The template gallery's label: which length it shows, and that the others have their own
    (an owner looking for a 30 s story among the 15 s ones saw none and was not told)."""
    length = _length(duration)
    if length is None:
        return "Templates (click one)"
    others = Counter(t.duration for t in spots.template_choices(ctx) if t.duration != length)
    more = "; ".join(f"{n} more at {d} s" for d, n in sorted(others.items()))
    return f"Templates for {length} s spots (click one)" + (
        f": {more}, under Length" if more else ""
    )


def _length(duration: int | str | None) -> int | None:
    """A spot length the page offers (15 or 30 s); None for any."""
    if duration in (None, ""):
        return None
    return _count(duration, "length")


def _hex(colour: str | None) -> str:
    """#RRGGBB from what the colour picker gives (#rgb, #rrggbb, #rrggbbaa or rgb()/rgba());
    anything else is passed on for the brief to refuse with its own message."""
    colour = (colour or "").strip()
    rgb = re.fullmatch(r"rgba?\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+).*\)", colour)
    if rgb:
        return "#" + "".join(f"{min(255, round(float(v))):02X}" for v in rgb.groups())
    if re.fullmatch(r"#[0-9A-Fa-f]{3}", colour):
        return "#" + "".join(c * 2 for c in colour[1:]).upper()
    if re.fullmatch(r"#[0-9A-Fa-f]{8}", colour):
        return colour[:7].upper()
    return colour.upper()


def _by_name(views, names: list[str], what: str) -> list[int]:
    by_name = {v.name: v.id for v in views}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise refused(f"There is no {what} called {unknown[0]!r}.")
    return [by_name[n] for n in names]


def _counted(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{round(seconds / 60)} min"


def _job_status(p: jobs.Progress, elapsed: float, typical: float, what: str) -> str:
    if p.state == "queued":
        ahead = "next in line" if p.position == 0 else f"{p.position} jobs ahead of it"
        return f"Your {what} is waiting: {ahead}."
    so_far = f"Rendering your {what}: {_duration(elapsed)} so far"
    if elapsed >= typical:  # past the estimate: say so rather than "about 1 s left" for long
        return f"{so_far}, longer than the usual {_duration(typical)}."
    return f"{so_far}, about {_duration(typical - elapsed)} left."


def _run_summary(report: bulk.RunReport) -> str:
    parts = [f"{report.ready} of {report.variants} variants ready"]
    if report.failed:
        parts.append(f"{report.failed} failed (hover a card in the library for why)")
    if report.cancelled:
        parts.append(f"{report.cancelled} not made (stopped)")
    return "Done: " + ", ".join(parts) + ". Compare them, then order the ones you want."


def _order_text(order: orders.OrderView, variants_text: str) -> str:
    lines = [f"**Order #{order.id}** · {order.status} · {order.quote_text} · {variants_text}"]
    lines.append(
        f"Shapes: {', '.join(order.shapes)} · for: "
        + ", ".join(orders.LABELS[d] for d in order.destinations)
    )
    if order.status == "quoted":
        lines.append("Approve to purchase: the files are rendered right away.")
    if order.status == "failed":
        lines.append(
            "A master did not pass a destination's QC or could not be rendered (see below): "
            "Render again, or cancel the order."
        )
    return "\n\n".join(lines)


def _verdicts(verdicts) -> str:
    """A master's verdict per destination, in words."""
    said = {True: "passes", False: "FAILS", None: "not checked yet"}
    return ", ".join(f"{said[ok]} {orders.LABELS[name]}" for name, ok in verdicts)
