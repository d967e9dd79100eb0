"""A spot from a brief: the business's words, photos and brand on a template; its storyboard;
candidate backgrounds for its setting; and its base variant, the creative as briefed, which
the preview shows and every personalized variant descends from."""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image
from pydantic import ValidationError

from app.services import brand_kits, pictures
from app.services.backgrounds import background, setting_request, stored_request
from app.services.cutouts import cutout
from app.services.errors import USER_ERRORS, UploadRefused, UserError
from app.services.pictures import Backdrop
from app.services.text_rules import FIELDS, clean, clean_all
from engine import ENGINE_VERSION, Priority, preset_for, with_defaults
from storage import GenerationParams, Spot
from templates import audio, mix
from templates.errors import BriefError
from templates.export import scene_stills
from templates.motion import Clip, Still
from templates.overlay import check_layout
from templates.spec import Template, all_templates, load_template
from templates.storyboard import (
    ON_SCREEN,
    UPLOADED,
    Brand,
    Brief,
    build_storyboard,
    left_out,
    limits,
    too_long,
)
from templates.thumbnails import thumbnail as template_thumbnail

if TYPE_CHECKING:
    from app.services.context import AppContext
    from engine import Engine, TextToImage

FRAME = (1280, 720)  # a variant's key frame
BOARD = (480, 270)  # a storyboard's scene
BRAND_FILES = ("logo", "heading_font", "body_font")
FILES = (*BRAND_FILES, "music_file")  # a brief's uploads besides its photos ("brand_assets")
# The brief's music, as the page offers it: the template's own bed, a built-in style by what
# it suits, or the business's own track.
MUSIC_CHOICES = [
    ("The template's own", ""),
    *((style.label, name) for name, style in audio.STYLES.items()),
    ("Upload your own", UPLOADED),
]
MAX_PHOTOS = 5
# In a spot's copy and a variant's parameters: the business's own picture the spot is set in
# (Backdrop.as_json), and the scenes set in another one, by their place in the template.
BACKGROUND, SCENE_PICTURES = "background", "scene_pictures"


@dataclass(frozen=True)
class TemplateChoice:
    id: str
    name: str
    duration: int
    use_case: str
    scenes: int
    thumbnail: Path


@dataclass(frozen=True)
class BriefForm:
    """What the brief page collects. Paths are uploads, still outside the asset store."""

    campaign_name: str
    template_id: str
    copy: dict[str, str]  # Brief's text fields: headline, offer, cta_text, ...
    colors: list[str]
    product_photos: list[Path]
    objective: str = ""
    logo: Path | None = None
    heading_font: Path | None = None
    body_font: Path | None = None
    voiceover: str = ""  # spoken over the scenes
    music: str = ""  # a MUSIC_CHOICES value; UPLOADED plays music_file
    music_file: Path | None = None
    # Where it is set: generated from the setting's words (neither), one of the business's
    # pictures (`background`), or a photo or clip uploaded with the brief (`background_file`,
    # added to its pictures and cropped around `background_focus`).
    background: Backdrop | None = None
    background_file: Path | None = None
    background_focus: tuple[float, float] = (0.5, 0.5)
    # A spot of the business's whose product photos this one takes where none is uploaded:
    # the one open on the page, whose brief a returning owner sends again, edited or not.
    photos_of: int | None = None


@dataclass(frozen=True)
class SceneCard:
    index: int
    title: str  # the scene's kind in words
    start: float
    duration: float
    copy: dict[str, str]
    still: Image.Image


@dataclass(frozen=True)
class SpotView:
    id: int
    campaign_id: int
    campaign_name: str
    template_id: str
    duration: int
    brief: Brief
    product_asset_ids: tuple[int, ...]
    base_variant_id: int | None
    # What the business should know about how its brief shows (a field this template has no
    # place for, no logo yet): plain sentences, shown at the brief.
    notes: tuple[str, ...] = ()
    objective: str = ""  # the campaign's


def template_choices(ctx: AppContext, duration: int | None = None) -> list[TemplateChoice]:
    """The templates (of one length, if given), each with its thumbnail, drawn once per
    template as it stands (its file's every detail names the drawing)."""
    folder = ctx.settings.data_dir / "thumbnails"
    folder.mkdir(parents=True, exist_ok=True)
    choices = []
    for t in all_templates():
        if duration is not None and t.duration != duration:
            continue
        drawn = hashlib.sha256(t.model_dump_json().encode()).hexdigest()[:12]
        thumbnail = folder / f"{t.id}-{drawn}.png"
        if not thumbnail.exists():
            template_thumbnail(t).save(thumbnail)
        choices.append(
            TemplateChoice(t.id, t.name, t.duration, t.use_case, len(t.scenes), thumbnail)
        )
    return choices


def create_spot(ctx: AppContext, business_id: int, form: BriefForm) -> SpotView:
    """A campaign and its spot from the brief. Copy that does not fit the template, a photo
    that is not an image, a missing field: each refused with what to change, and everything is
    checked before anything is stored, so a refused brief leaves no row and no file."""
    template = load_template(form.template_id)
    text = clean_all({"campaign_name": form.campaign_name, "objective": form.objective})
    copy = {**clean_all(form.copy), "voiceover": script(form.voiceover)}
    if not text["campaign_name"]:
        raise UserError("Give the campaign a name.")
    if not form.product_photos and form.photos_of is None:
        raise UserError("Add a photo of your product.")
    if len(form.product_photos) > MAX_PHOTOS:
        raise UserError(f"Add at most {MAX_PHOTOS} product photos.")
    with ctx.tenant(business_id) as tenant:
        business_name = tenant.business.name
        # The open spot (another business's is not found, before anything is stored): its
        # photos stand in where none is uploaded (checked above), and under its campaign's
        # name the new spot is its next version.
        opened = None if form.photos_of is None else tenant.campaigns.spot(form.photos_of)
        spot_photos = [] if form.product_photos else [a.id for a in opened.product_assets]
        open_campaign = None if opened is None else opened.campaign_id
        if form.background is not None:
            pictures.checked(tenant, form.background)  # another business's: "not found"
        # The kit's logo and fonts stand in for those not uploaded; an upload replaces them.
        kept = {r: a for r, a in tenant.brand_kit.files().items() if getattr(form, r) is None}
        kept_paths = {role: tenant.assets.path(asset) for role, asset in kept.items()}
    given = {k: v for k, v in copy.items() if v}  # an empty field takes the default
    # The name is the business's own (its account's), whatever the form says.
    brief = brief_of(
        {**given, "business_name": business_name, "music": form.music,
         "brand": {"colors": form.colors}}
    )  # fmt: skip
    build_storyboard(template, brief)  # CopyError says which line is too long for which scene
    if (brief.music == UPLOADED) != (form.music_file is not None):
        raise UserError(
            "Upload your music track, or choose one of the built-in styles."
            if form.music_file is None
            else "You uploaded a music track: choose Upload your own under Music to play it."
        )
    mix.spoken_length(brief.voiceover, template.duration)  # a script too long is refused
    uploads = [(p, "product photo") for p in form.product_photos] + [
        (path, role) for role in FILES if (path := getattr(form, role)) is not None
    ]
    for path, role in uploads:
        with _refused_as(path, role):
            _check_upload(ctx, path, role)
    if form.music_file is not None:
        with _refused_as(form.music_file, "music_file"):
            audio.decode(form.music_file, template.duration)  # one that cannot be played
    if form.background_file is not None:
        with _refused_as(form.background_file, "background"):
            pictures.check_upload(ctx, form.background_file)
    # Every line laid out as the final lays it out, in the brand's own fonts and beside its
    # logo: a LayoutError names the line that would not fit on screen.
    files = {role: path for role in BRAND_FILES if (path := getattr(form, role)) is not None}
    files |= kept_paths
    branded = brief.model_copy(update={"brand": brief.brand.model_copy(update=files)})
    try:
        check_layout(build_storyboard(template, branded))
    except OSError:
        raise UploadRefused(
            "A font you uploaded cannot be read; upload another TTF or OTF."
        ) from None
    with ctx.tenant(business_id) as tenant:
        added = [tenant.assets.add(p, p.name).id for p in form.product_photos]
        brand = uploads[len(added) :]
        photos = added or spot_photos
        files = kept | {role: tenant.assets.add(path, path.name).id for path, role in brand}
        brand_kits.save(tenant, brief, {r: a for r, a in files.items() if r in BRAND_FILES})
        campaign = _campaign_for(tenant, text, open_campaign)
        stored = {**brief.model_dump(mode="json"), "brand_assets": files}
        backdrop = form.background
        if (
            form.background_file is not None and backdrop is None
        ):  # one of the business's pictures from now on
            path = form.background_file
            own = tenant.assets.add(path, path.name, library=True)
            backdrop = Backdrop(own.id, form.background_focus)
        if backdrop is not None:
            stored[BACKGROUND] = backdrop.as_json()
        spot = tenant.campaigns.create_spot(
            campaign.id,
            template_id=template.id,
            template_version=template.version,
            duration_s=template.duration,
            copy=stored,
            product_asset_ids=photos,
        )
        return _view(tenant, spot)


def _campaign_for(tenant, text: dict[str, str], open_campaign: int | None):
    """The campaign a brief's spot joins: the open spot's, where the brief keeps its name (the
    owner edited their spot: the new one is its next version, and the campaign's objective is
    the brief's, where it gives one); else a new one."""
    if open_campaign is not None:
        campaign = tenant.campaigns.get(open_campaign)
        if campaign.name == text["campaign_name"]:
            if not text["objective"]:
                return campaign
            return tenant.campaigns.set_objective(open_campaign, text["objective"])
    name = _unused_name(text["campaign_name"], {c.name for c in tenant.campaigns.list()})
    return tenant.campaigns.create(name, text["objective"])


def _unused_name(name: str, taken: set[str]) -> str:
    """`name`, or where the business has a campaign of that name already (a new brief that
    happens to take it) "name (2)", "name (3)", ...: two campaigns of one name cannot be told
    apart in the Library."""
    n = 1
    unused = name
    while unused in taken:
        n += 1
        suffix = f" ({n})"
        unused = name[: FIELDS["campaign_name"][1] - len(suffix)] + suffix
    return unused


BRIEF_COPY = ("product_name", "headline", "body", "offer", "cta_text", "cta_url", "phone",
              "tagline", "setting")  # fmt: skip
BRIEF_EXTRAS = ("objective", "colors", "voiceover", "music", "background")


def brief_form(
    campaign_name: str,
    template_id: str,
    brief: dict[str, Any],
    photos: list[Path],
    *,
    logo: Path | None = None,
    heading_font: Path | None = None,
    body_font: Path | None = None,
    music_file: Path | None = None,
    background_file: Path | None = None,
) -> BriefForm:
    """A brief as a script writes it (`spotforge spot create --brief`): a JSON object of the
    copy (BRIEF_COPY), optionally "objective", "colors" (#RRGGBB, primary first), "voiceover"
    (the script spoken over it), "music" (a built-in style; the uploaded track when
    `music_file` is given) and "background": {"asset": one of the business's pictures, or
    "file": a photo or clip (given here as `background_file`), "focus": [x, y] or a name such
    as "bottom left"}. The business's name is its own, so a "business_name" in it is not
    used."""
    if not isinstance(brief, dict):
        raise UserError("The brief must be a JSON object of the spot's copy.")
    unknown = sorted(set(brief) - {*BRIEF_COPY, *BRIEF_EXTRAS, "business_name"})
    if unknown:
        raise UserError(
            f"The brief has fields Spotforge does not know ({', '.join(unknown)}); it takes "
            f"{', '.join(BRIEF_COPY + BRIEF_EXTRAS[:-1])} and {BRIEF_EXTRAS[-1]}."
        )
    colors = brief.get("colors", Brand().colors)
    if not isinstance(colors, list) or not all(isinstance(c, str) for c in colors):
        raise UserError('The brief\'s "colors" must be a list like ["#1F3A5F", "#F2B134"].')
    return BriefForm(
        campaign_name=campaign_name,
        template_id=template_id,
        copy={k: brief.get(k) for k in BRIEF_COPY},
        colors=colors,
        product_photos=photos,
        objective=brief.get("objective") or "",
        logo=logo,
        heading_font=heading_font,
        body_font=body_font,
        voiceover=brief.get("voiceover") or "",
        music=brief.get("music") or (UPLOADED if music_file else ""),
        music_file=music_file,
        **_background_of(brief.get("background"), background_file),
    )


def _background_of(given: object, file: Path | None) -> dict[str, Any]:
    """BriefForm's background fields from the brief's "background" (see `brief_form`)."""
    if given is None:
        return {}
    if not isinstance(given, dict) or not set(given) <= {"asset", "file", "focus"}:
        raise UserError('The brief\'s "background" is like {"file": "shop.jpg", "focus": [0, 1]}.')
    focus = pictures.focus_of(given.get("focus"))
    if ("asset" in given) == ("file" in given):
        raise UserError('The brief\'s "background" names one picture: its "file" or its "asset".')
    if "file" in given:
        return {"background_file": file, "background_focus": focus}
    asset = given["asset"]
    if not isinstance(asset, int) or isinstance(asset, bool):
        raise UserError('The brief\'s "background" "asset" is the number of one of your pictures.')
    return {"background": Backdrop(asset, focus)}


KINDS = {"image": "a PNG, JPEG or WebP image", "font": "a TTF or OTF font",
         "audio": "WAV, MP3 or M4A audio"}  # fmt: skip


@contextmanager
def _refused_as(path: Path, role: str):
    """A refusal of the upload at `path` as UploadRefused, saying which of the brief's files it
    is (the same words refuse a logo and a product photo; a brief can carry six files)."""
    try:
        yield
    except USER_ERRORS as exc:
        what = UPLOAD_NAMES.get(role, role.replace("_", " "))
        raise UploadRefused(f"Your {what} ({path.name}) was not taken. {exc}") from exc


UPLOAD_NAMES = {"music_file": "music track", "background": "background picture"}


def _check_upload(ctx: AppContext, path: Path, role: str) -> None:
    """Refuse an upload that is not the kind its role needs, before anything is stored."""
    family = "font" if role.endswith("font") else "audio" if role == "music_file" else "image"
    info = ctx.assets.inspect(path)
    if info.media_type.split("/")[0] != family:
        raise UserError(f"It must be {KINDS[family]}.")


def script(text: str | None) -> str:
    """A voice-over as it is stored and spoken: one line (a line break is only a space to a
    voice), within the field's rules."""
    return clean("voiceover", " ".join(text.split()) if isinstance(text, str) else text)


def voiceover_note(text: str | None, duration: int) -> str:
    """The voice-over's spoken length against the room a spot of `duration` seconds has, for
    the brief page as the script is typed; what would be refused is said the same way."""
    try:
        words = script(text)
        if not words:
            return ""
        length = mix.spoken_length(words, duration)
    except (UserError, BriefError) as exc:
        return f"⚠ {exc}"
    return (
        f"Voice-over: about {length:.1f} s spoken; a {duration} s spot has room for about "
        f"{mix.room(duration):.0f} s."
    )


def spot_view(ctx: AppContext, business_id: int, spot_id: int) -> SpotView:
    with ctx.tenant(business_id) as tenant:
        return _view(tenant, tenant.campaigns.spot(spot_id))


def storyboard(ctx: AppContext, engine: Engine, business_id: int, spot_id: int) -> list[SceneCard]:
    """The spot's scenes in their order with their copy, each drawn over its background once one
    is chosen (over the brand card before), or over the business's own picture where the brief
    chose one."""
    with ctx.tenant(business_id) as tenant:
        spot = tenant.campaigns.spot(spot_id)
        base = tenant.variants.base_of(spot_id)
        params = None if base is None else GenerationParams.of(base)
        extra = spot.copy if params is None else params.extra
        copy = spot.copy if params is None else params.extra["copy"]
        brief = resolved_brief(tenant, copy, extra.get("brand_assets", {}))
        photos = [a.id for a in spot.product_assets]
    board = build_storyboard(load_template(spot.template_id), brief, extra.get("scene_order"))
    # The product in its scenes from the first look, over the brand card until a background
    # is chosen, as the spot will show it.
    photo = int(extra["product_asset_id"]) if params else next(iter(photos), None)
    product = None if photo is None else cutout(ctx, engine, business_id, photo)
    visuals = scene_visuals(ctx, engine, business_id, params, board, BOARD, product, extra=extra)
    stills = scene_stills(board, visuals, BOARD, product)
    return [
        SceneCard(s.index, s.title, s.start, s.duration, dict(s.copy_text), still)
        for s, still in zip(board.scenes, stills, strict=True)
    ]


def scene_visuals(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    params: GenerationParams | None,
    board,
    size: tuple[int, int],
    product: Image.Image | None = None,
    *,
    extra: dict[str, Any] | None = None,
    priority: Priority = Priority.INTERACTIVE,
) -> dict[int, Still | Clip]:
    """Each scene's moving picture at `size` by its place in the spot (brand cards need none),
    with `product` (its cut-out) in product scenes: the business's own picture where the
    variant names one for the scene or the whole spot, graded toward the variant's light;
    else the generated background (`scene_backdrops`, any not made yet asked at `priority`).
    Without `params` (a spot no background was chosen for yet; `extra` its copy), only the
    scenes set in the business's pictures."""
    extra = params.extra if extra is None else extra
    light = extra.get("light", "day")
    chosen = {
        s.index: own
        for s in board.scenes
        if s.visual.source != "brand" and (own := own_picture(extra, s.origin)) is not None
    }
    drawn = [s for s in board.scenes if s.index not in chosen]
    backdrops = (
        {} if params is None
        else scene_backdrops(ctx, engine, business_id, params, drawn, priority)
    )  # fmt: skip
    visuals: dict[int, Still | Clip] = {}
    with ctx.tenant(business_id) as tenant:
        for s in board.scenes:
            if s.visual.source == "brand":
                continue
            subject = product if s.visual.source == "product" else None
            if s.index in backdrops:
                visuals[s.index] = Still(backdrops[s.index], subject=subject)
            elif s.index in chosen:  # a clip runs a second past its scene: the next fades in
                visuals[s.index] = pictures.visual(tenant, chosen[s.index], light=light,
                                                   size=size, seconds=s.duration + 1.0,
                                                   subject=subject)  # fmt: skip
    return visuals


def own_picture(extra: dict[str, Any], origin: int) -> Backdrop | None:
    """The business's picture a variant sets the scene at `origin` in, if any."""
    scene = extra.get(SCENE_PICTURES, {}).get(str(origin))
    return Backdrop.of(scene) or Backdrop.of(extra.get(BACKGROUND))


def scene_backdrops(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    params: GenerationParams,
    scenes,
    priority: Priority = Priority.INTERACTIVE,
) -> dict[int, Image.Image]:
    """Each of `scenes`' generated background by its place in the spot: the variant's own, or,
    for a scene regenerated on its own, the same prompt at that scene's seed. Brand cards need
    none."""
    by_seed: dict[int, Image.Image] = {}
    backdrops = {}
    for scene in scenes:
        if scene.visual.source == "brand":
            continue
        seed = scene_seed(params.extra, scene.origin, params.seed)
        if seed not in by_seed:
            request = replace(stored_request(params), seed=seed, priority=priority)
            made = background(ctx, engine, business_id, request)
            with (
                ctx.tenant(business_id) as tenant,
                Image.open(tenant.assets.path(made.asset_id)) as image,
            ):
                image.load()
                by_seed[seed] = image
        backdrops[scene.index] = by_seed[seed]
    return backdrops


def scene_seed(extra: dict[str, Any], origin: int, default: int) -> int:
    return int(extra.get("scene_seeds", {}).get(str(origin), default))


def set_scene_picture(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    spot_id: int,
    position: int,
    backdrop: Backdrop | None,
) -> int:
    """Set one scene (0-based place in the spot) in one of the business's pictures (None: back
    to the spot's background); a new base variant records it. Returns the base's id."""
    with ctx.tenant(business_id) as tenant:
        spot = tenant.campaigns.spot(spot_id)
        scene = _scene_with_background(spot, position)
        chosen = dict(spot.copy.get(SCENE_PICTURES, {}))
        if backdrop is None:
            chosen.pop(str(scene.origin), None)
        else:
            chosen[str(scene.origin)] = pictures.checked(tenant, backdrop).as_json()
        spot.copy = {**spot.copy, SCENE_PICTURES: chosen}
        seed = _base_seed(tenant, spot_id)
    return choose_background(ctx, engine, business_id, spot_id, seed)


def _scene_with_background(spot: Spot, position: int):
    """The spot's scene at this 0-based place, refused with a sentence when it has none or
    when it is a brand card (which has no background)."""
    board = build_storyboard(
        load_template(spot.template_id), brief_of(spot.copy), spot.copy.get("scene_order")
    )
    if not 0 <= position < len(board.scenes):
        raise UserError(f"the spot has scenes 1 to {len(board.scenes)}")
    scene = board.scenes[position]
    if scene.visual.source == "brand":
        raise UserError(f"scene {position + 1} is a brand card: it has no background")
    return scene


def reorder_scenes(
    ctx: AppContext, engine: Engine, business_id: int, spot_id: int, positions: list[int]
) -> int:
    """Put the spot's scenes in another order: `positions` lists the scenes by their current
    places (0-based), each once, in the order wanted. A new base variant records it. Returns
    the base's id."""
    with ctx.tenant(business_id) as tenant:
        spot = tenant.campaigns.spot(spot_id)
        template = load_template(spot.template_id)
        current = spot.copy.get("scene_order") or list(range(len(template.scenes)))
        if sorted(positions) != list(range(len(current))):
            raise UserError(
                f"a scene order names each of the {len(current)} scenes once, 1 to "
                f"{len(current)}; got {[p + 1 for p in positions]}"
            )
        order = [current[p] for p in positions]
        build_storyboard(template, brief_of(spot.copy), order)
        spot.copy = {**spot.copy, "scene_order": order}
        seed = _base_seed(tenant, spot_id)
    return choose_background(ctx, engine, business_id, spot_id, seed)


def regenerate_scene(
    ctx: AppContext, engine: Engine, business_id: int, spot_id: int, position: int
) -> int:
    """Give one scene (0-based place in the spot) a background of its own, drawn anew; a new
    base variant records it. Returns the base's id."""
    with ctx.tenant(business_id) as tenant:
        spot = tenant.campaigns.spot(spot_id)
        scene = _scene_with_background(spot, position)
        seed = _base_seed(tenant, spot_id)
        seeds = dict(spot.copy.get("scene_seeds", {}))
        seeds[str(scene.origin)] = max([seed, *seeds.values()]) + 1  # a picture no scene has
        spot.copy = {**spot.copy, "scene_seeds": seeds}
    return choose_background(ctx, engine, business_id, spot_id, seed)


def background_candidates(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    spot_id: int,
    *,
    seeds: range = range(3),
    preset: str | None = None,
    recipe: str = "balanced",
) -> list[tuple[int, Path]]:
    """Backgrounds for the spot's setting, one per seed (each made once and kept)."""
    preset = preset or ctx.settings.model
    made = []
    for seed in seeds:
        request = _setting_request(ctx, business_id, spot_id, preset, seed, recipe)
        result = background(ctx, engine, business_id, request)
        with ctx.tenant(business_id) as tenant:
            made.append((seed, tenant.assets.path(result.asset_id)))
    return made


def choose_background(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    spot_id: int,
    seed: int,
    *,
    preset: str | None = None,
    recipe: str = "balanced",
) -> int:
    """Make the background of this seed the spot's: a new base variant (the previous base, if
    any, is its parent). Choosing the current one again changes nothing. Returns the base's id."""
    preset = preset or ctx.settings.model
    revision = engine.revision(preset)
    request = _setting_request(ctx, business_id, spot_id, preset, seed, recipe)
    with ctx.tenant(business_id) as tenant:
        spot = tenant.campaigns.spot(spot_id)
        current = tenant.variants.base_of(spot_id)
        brief = brief_of(spot.copy)
        params = generation_params(
            request, revision, {"role": "base", **variant_inputs(spot, brief)}
        )
        if current is not None and GenerationParams.of(current) == params:
            return current.id
        parent = None if current is None else current.id
        return tenant.variants.create(spot_id, params, parent_id=parent).id


def _setting_request(
    ctx: AppContext, business_id: int, spot_id: int, preset: str, seed: int, recipe: str
) -> TextToImage:
    """The spot's background as briefed at `seed` (its setting read afresh)."""
    with ctx.tenant(business_id) as tenant:
        setting = brief_of(tenant.campaigns.spot(spot_id).copy).setting
    return setting_request(ctx, business_id, setting, preset=preset, seed=seed, recipe=recipe)


def base_variant(
    ctx: AppContext, engine: Engine, business_id: int, spot_id: int, *, preset: str, recipe: str
) -> int:
    """The spot's base variant, made with the first candidate background if none was chosen."""
    with ctx.tenant(business_id) as tenant:
        current = tenant.variants.base_of(spot_id)
        if current is not None:
            return current.id
    return choose_background(ctx, engine, business_id, spot_id, 0, preset=preset, recipe=recipe)


def brief_of(copy: dict[str, Any]) -> Brief:
    try:
        return Brief.model_validate(copy)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise UserError(f"The brief is incomplete: {problems}.") from None


def resolved_brief(tenant, copy: dict[str, Any], brand_assets: dict[str, int]) -> Brief:
    """The brief with its brand files (logo, fonts) pointing at the stored assets."""
    brief = brief_of(copy)
    files = {r: tenant.assets.path(int(a)) for r, a in brand_assets.items() if r in BRAND_FILES}
    if not files:
        return brief
    return brief.model_copy(update={"brand": brief.brand.model_copy(update=files)})


AUDIENCE_LINES = "audience_lines"  # in a spot's copy: the lines its owner chose per audience


def audience_lines(copy: dict[str, Any]) -> dict[int, dict[str, str]]:
    """The lines the owner chose per audience (by id) as the spot's copy stores them; an audience
    without any airs the owner's own words."""
    return {int(a): dict(lines) for a, lines in copy.get(AUDIENCE_LINES, {}).items()}


def check_copy(tenant, template: Template, brief: Brief, made_with: dict[str, Any]) -> None:
    """Words written after the brief (an audience's lines, a variant's edit) checked as the
    brief's were: they fit the template's scenes (CopyError) and lay out on screen in the
    brand's own fonts (LayoutError). `made_with` (a spot's copy, a variant's parameters) gives
    the brand files and the scene order."""
    files = made_with.get("brand_assets", {})
    branded = resolved_brief(tenant, brief.model_dump(mode="json"), files)
    check_layout(build_storyboard(template, branded, made_with.get("scene_order")))


def uploaded_track(tenant, brief: Brief, brand_assets: dict[str, int]) -> Path | None:
    """The stored track a brief plays under its spot, when it chose its own."""
    return tenant.assets.path(int(brand_assets["music_file"])) if brief.music == UPLOADED else None


def variant_inputs(spot: Spot, copy: Brief) -> dict[str, Any]:
    """What a variant is made from besides its background: the product photo, the frame, the
    copy (adapted to its audience; with it the voice-over script and the music chosen), the
    brand files and an uploaded track, the scene order and the scenes' own seeds, so it renders
    the same whatever changes later in the library or the brief."""
    inputs = {
        "product_asset_id": spot.product_assets[0].id,
        "frame": list(FRAME),
        "copy": copy.model_dump(mode="json"),
        "brand_assets": dict(spot.copy.get("brand_assets", {})),
        "scene_order": spot.copy.get("scene_order"),
        "scene_seeds": dict(spot.copy.get("scene_seeds", {})),
    }
    # The business's own pictures, where it chose them (a spot without keeps the parameters
    # it always had).
    for key in (BACKGROUND, SCENE_PICTURES):
        if spot.copy.get(key):
            inputs[key] = spot.copy[key]
    return inputs


def generation_params(request: TextToImage, revision: str, extra: dict) -> GenerationParams:
    """Everything that determines a variant, with the preset's defaults written out."""
    preset = preset_for(request.preset)
    request = with_defaults(request, preset)
    return GenerationParams(
        model_id=preset.id,
        model_revision=revision,
        task=request.task.value,
        prompt=request.prompt,
        seed=request.seed,
        steps=request.steps,
        guidance=request.guidance,
        width=request.width,
        height=request.height,
        recipe=request.recipe,
        engine_version=ENGINE_VERSION,
        extra={**extra, "layout": request.layout} if request.layout else extra,
    )


SAMPLE_COPY = {  # template thumbnails, the demo, and examples
    "business_name": "Harbor Coffee",
    "product_name": "Espresso",
    "headline": "Fresh espresso, fast",
    "body": "Roasted on the harbor every morning.",
    "offer": "20 % off this week",
    "cta_text": "Order online",
    "cta_url": "harborcoffee.com",
    "tagline": "Good mornings start here",
}


def _base_seed(tenant, spot_id: int) -> int:
    base = tenant.variants.base_of(spot_id)
    return 0 if base is None else base.seed


def _view(tenant, spot: Spot) -> SpotView:
    base = tenant.variants.base_of(spot.id)
    brief = brief_of(spot.copy)
    return SpotView(
        spot.id,
        spot.campaign_id,
        spot.campaign.name,
        spot.template_id,
        int(spot.duration_s),
        brief,
        tuple(a.id for a in spot.product_assets),
        None if base is None else base.id,
        brief_notes(
            load_template(spot.template_id),
            brief,
            has_logo="logo" in spot.copy.get("brand_assets", {}),
        ),
        spot.campaign.objective or "",
    )


def brief_notes(template: Template, brief: Brief, *, has_logo: bool) -> tuple[str, ...]:
    """What the business is told at the brief, rather than finding out on air.

    A field the template has no place for is kept with the brief (they are the business's own
    words, and another template may show them), but the business is told that this spot will
    not show it, and which templates would. Every end card shows the business's name, web
    address and phone; without a logo it names the business in text alone."""
    notes = []
    for field in left_out(template, brief):
        label = FIELDS[field][0].capitalize()
        others = [t.name for t in all_templates() if field in t.shows and t.id != template.id]
        where = f" {_listed(others)} show it." if others else ""
        notes.append(
            f"{template.name} does not show what you wrote under {label}: it stays in your "
            f"brief but will not be on screen in this spot.{where}"
        )
    if not has_logo:
        notes.append(
            "No logo yet: the end card names your business in text. Add your logo to show it too."
        )
    return tuple(notes)


ALWAYS_SHOWN = ("cta_url", "phone")  # on every end card, with the business's name and logo


def template_note(template_id: str) -> str:
    """What a template puts on screen, for the brief page as the template is chosen."""
    template = load_template(template_id)
    fields = [f for f in ON_SCREEN if f in template.shows and f not in ALWAYS_SHOWN]
    missing = [FIELDS[f][0].capitalize() for f in ON_SCREEN if f not in template.shows]
    room = limits(template)
    sizes = [f"{FIELDS[f][0]} {room[f]}" for f in fields]
    note = (
        f"{template.name} shows your {_listed([FIELDS[f][0] for f in fields])}, and ends on your "
        "business name and web address (with its QR code), and your phone and logo when you add "
        f"them. Room on screen, in characters: {', '.join(sizes)}."
    )
    plural = "s" if len(missing) > 1 else ""
    return note + (f" It does not show the {_listed(missing)} field{plural}." if missing else "")


def copy_note(template_id: str, fields: dict[str, str]) -> str:
    """The words that will not fit the template's screens, for the brief page as they are
    typed (the counter under a field shows the most a brief may hold, not this template's
    room); empty when all fit."""
    template = load_template(template_id)
    return "\n\n".join(
        f"⚠ {FIELDS[field][0].capitalize()}: {length} characters, and {template.name} has room "
        f"for {room} on screen. Shorten it, or pick a template with more room."
        for field, length, room in too_long(template, fields)
    )


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
