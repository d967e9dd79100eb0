"""What the checks judge: each variant of a spot loaded once as a `Subject` (its parameters,
brief, stored files and renders; its pictures drawn on first use), and the `Panel` the checks of
one review share.

Reads are scoped to the business (`ctx.tenant`): another business's spot is "not found".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from app.services.backgrounds import generation_key, stored_request, variant_light
from app.services.cutouts import cutout
from app.services.pictures import key_frame
from app.services.review.reading import _signature
from app.services.review.verdicts import SceneJudge
from app.services.spots import own_picture, resolved_brief, scene_seed
from storage import GenerationParams, RenderTier, VariantStatus
from templates.cards import brand_card
from templates.composite import CompositeResult, composite
from templates.motion import Still, animate
from templates.overlay import JUDGED_AT, overlay
from templates.spec import load_template
from templates.storyboard import Brand, Brief, Scene, build_storyboard

if TYPE_CHECKING:
    from app.services.context import AppContext
    from engine import Engine

RETRY_ROLE = "retry"  # a variant made again by refine; it stands in for its parent
PRODUCT_LEVELS = 40  # a pixel the product changes by more than this is the product's


@dataclass(frozen=True)
class StoredFile:
    role: str  # in words: "key frame", "product photo", ...
    asset_id: int
    path: Path
    sha256: str


@dataclass(frozen=True)
class Rendered:
    tier: str
    qc_report: dict[str, Any] | None


@dataclass
class Subject:
    """One variant with everything its checks read, loaded once; pictures on first use."""

    id: int
    status: VariantStatus
    last_error: str | None
    geography_id: int | None
    geography: str
    audience: str
    landscape: str | None
    light: str | None  # the audience's time of day, which its background is drawn in
    params: GenerationParams
    brief: Brief
    template_id: str
    frame_path: Path | None
    background_path: Path | None
    backdrops: dict[int, Path]  # each scene seed's stored background
    photo_path: Path
    cut: Image.Image | None  # the stored cut-out (its alpha is the product's mask)
    renders: list[Rendered]
    files: list[StoredFile]
    # The business's own pictures as the key frame shows them, by the scene (its place in the
    # template) set in one: those scenes have no generated background.
    pictured: dict[int, Image.Image] = field(default_factory=dict)

    @property
    def size(self) -> tuple[int, int]:
        width, height = self.params.extra.get("frame", (1280, 720))
        return int(width), int(height)

    @cached_property
    def frame(self) -> Image.Image | None:
        if self.frame_path is None:
            return None
        try:
            with Image.open(self.frame_path) as image:
                return image.convert("RGB")
        except OSError:
            return None  # integrity says what happened to the file

    @cached_property
    def reference(self) -> Image.Image | None:
        """The uploaded photo with the cut-out's mask: the product as photographed."""
        if self.cut is None:
            return None
        with Image.open(self.photo_path) as photo:
            rgb = photo.convert("RGB")
        if rgb.size != self.cut.size:
            return self.cut.convert("RGBA")
        rgba = rgb.convert("RGBA")
        rgba.putalpha(self.cut.getchannel("A"))
        return rgba

    @cached_property
    def expected(self) -> CompositeResult | None:
        """The frame as its parameters make it: where the product goes, and its own pixels."""
        if self.reference is None:
            return None
        own = own_picture(self.params.extra, -1)  # the whole spot's, which the key frame shows
        if own is not None:
            return composite(self.pictured[-1], self.reference, self.size)
        if self.background_path is None:
            return None
        with Image.open(self.background_path) as scene:
            return composite(scene.convert("RGB"), self.reference, self.size)

    @cached_property
    def board(self):
        return build_storyboard(
            load_template(self.template_id), self.brief, self.params.extra.get("scene_order")
        )

    @cached_property
    def scenes(self) -> list[LaidOut]:
        """Each scene as the spot draws it from the variant's stored inputs, at the key frame's
        size: its moving picture (brand card, background, or background with the product) at
        its start, middle and end, under the copy laid out by the templates' overlay code."""
        laid = []
        brand = self.brief.brand
        for scene in self.board.scenes:
            product = scene.visual.source == "product" and self.cut is not None
            if scene.visual.source == "brand":
                plain = Still(_brand_card(tuple(brand.colors), self.size, scene.index))
            else:
                plain = Still(self._backdrop(scene))
            visual = Still(plain.image, subject=self.cut) if product else plain
            picture = animate(visual, scene.motion, scene.duration, self.size)
            moments = [t * scene.duration for t in JUDGED_AT]
            layer, blocks = overlay(scene, brand, [picture(t) for t in moments])
            without = animate(plain, scene.motion, scene.duration, self.size) if product else None
            pictures, products = [], []
            for t in moments:
                shown = picture(t)
                if without is not None:  # where adding the product changed the picture
                    moved = np.abs(np.asarray(shown, np.int16) - np.asarray(without(t), np.int16))
                    products.append(moved.max(axis=2) > PRODUCT_LEVELS)
                stamped = shown.convert("RGBA")
                stamped.alpha_composite(layer)
                pictures.append(stamped.convert("RGB"))
            laid.append(LaidOut(scene, pictures, layer, blocks, products))
        return laid

    def _backdrop(self, scene: Scene) -> Image.Image:
        if scene.origin in self.pictured:
            return self.pictured[scene.origin]
        seed = scene_seed(self.params.extra, scene.origin, self.params.seed)
        path = self.backdrops.get(seed, self.background_path)
        if path is None:  # the background is gone (integrity says so): the frame stands in
            return self.frame
        with Image.open(path) as image:
            return image.convert("RGB")


@dataclass(frozen=True)
class LaidOut:
    scene: Scene
    pictures: list[Image.Image]  # RGB with the copy drawn, at the scene's start, middle and end
    layer: Image.Image  # RGBA: the copy (and logo and QR code) alone
    blocks: list  # templates.overlay.Block: where each text slot landed
    products: list[np.ndarray]  # per moment, where the product is (product scenes only)


@dataclass
class Panel:
    """What the checks of one review share: every variant under review, the scene judge of
    each model (`judges`: preset -> judge or None), and file hashes and frame signatures
    already computed."""

    subjects: list[Subject]
    judges: Callable[[str], SceneJudge | None] = lambda preset: None
    hashes: dict[Path, str] = field(default_factory=dict)
    signatures: dict[int, tuple[np.ndarray, np.ndarray] | None] = field(default_factory=dict)
    _comparable: tuple[list[Subject], np.ndarray, np.ndarray] | None = field(
        default=None, init=False, repr=False
    )

    def comparable(self) -> tuple[list[Subject], np.ndarray, np.ndarray]:
        """The variants that have a frame signature, their hashes (n x 63) and colours
        (n x 8 x 8 x 3), computed once per review."""
        if self._comparable is None:
            found = [(s, sig) for s in self.subjects if (sig := _signature(s, self)) is not None]
            hashes = np.array([sig[0] for _, sig in found], dtype=bool).reshape(-1, 63)
            colours = np.array([sig[1] for _, sig in found]).reshape(-1, 8, 8, 3)
            self._comparable = ([s for s, _ in found], hashes, colours)
        return self._comparable


@cache
def _brand_card(colors: tuple[str, ...], size: tuple[int, int], seed: int) -> Image.Image:
    """A brand scene's picture, as the spot draws it (the same for every variant in a colour)."""
    return brand_card(Brand(colors=list(colors)), size, seed=seed)


def _subjects(ctx: AppContext, engine: Engine, business_id: int, spot_id: int) -> list[Subject]:
    with ctx.tenant(business_id) as tenant:
        spot = tenant.campaigns.spot(spot_id)  # NotFound for another business's spot
        chosen = _current(tenant.variants.list(spot_id), tenant.variants.base_of(spot_id))
        frames = tenant.variants.frames([v.id for v in chosen])
        rows = []
        for v in chosen:
            params = GenerationParams.of(v)
            place = None if v.geography_id is None else tenant.library.geography(v.geography_id)
            people = None if v.audience_id is None else tenant.library.audience(v.audience_id)
            product = int(params.extra["product_asset_id"])
            files = [_file(tenant, "product photo", product)]
            brand = params.extra.get("brand_assets", {})
            files += [_file(tenant, role.replace("_", " "), int(a)) for role, a in brand.items()]
            request = stored_request(params)
            seeds = {params.seed, *map(int, params.extra.get("scene_seeds", {}).values())}
            backdrops = {}
            for seed in sorted(seeds):  # the variant's background, and any scene's own
                made = tenant.generations.get(
                    generation_key(replace(request, seed=seed), params.model_revision)
                )
                if made is not None:
                    backdrops[seed] = tenant.assets.path(made.asset_id)
                    what = "background" if seed == params.seed else f"background (seed {seed})"
                    files.append(_file(tenant, what, made.asset_id))
            pictured = _pictured(tenant, spot.template_id, params)
            brief = resolved_brief(tenant, params.extra["copy"], brand)
            renders = tenant.variants.renders(v.id)
            for r in renders:
                what = "key frame" if r.tier is RenderTier.FRAME else f"{r.tier.value} render"
                files.append(_file(tenant, f"{what} (render #{r.id})", r.asset_id))
            rows.append(dict(
                id=v.id,
                status=v.status,
                last_error=v.last_error,
                geography_id=v.geography_id,
                geography="as briefed" if place is None else place.name,
                audience="everyone" if people is None else people.name,
                landscape=None if place is None else place.landscape,
                light=None if people is None else variant_light(brief.setting, people.time_of_day),
                params=params,
                brief=brief,
                template_id=spot.template_id,
                frame_path=tenant.assets.path(frames[v.id]) if v.id in frames else None,
                background_path=backdrops.get(params.seed),
                backdrops=backdrops,
                photo_path=tenant.assets.path(product),
                renders=[Rendered(r.tier.value, r.qc_report) for r in renders],
                files=files,
                pictured=pictured,
            ))  # fmt: skip
    cuts: dict[int, Image.Image | None] = {}
    subjects = []
    for row in rows:
        product = int(row["params"].extra["product_asset_id"])
        if product not in cuts:
            try:
                cuts[product] = cutout(ctx, engine, business_id, product)
            except OSError:
                cuts[product] = None  # the photo is unreadable: integrity says so
        subjects.append(Subject(**row, cut=cuts[product]))
    return subjects


def _pictured(tenant, template_id: str, params: GenerationParams) -> dict[int, Image.Image]:
    """The variant's own pictures at its key frame's size, by scene origin (-1: the whole
    spot's, for the key frame), cropped and graded as the spot shows them."""
    extra = params.extra
    size = tuple(extra.get("frame", (1280, 720)))
    light = extra.get("light", "day")
    origins = [-1, *range(len(load_template(template_id).scenes))]
    chosen = {o: own for o in origins if (own := own_picture(extra, o)) is not None}
    made = {own: key_frame(tenant, own, light=light, size=size) for own in set(chosen.values())}
    return {o: made[own] for o, own in chosen.items()}


def _current(variants, base) -> list:
    """The spot's current base and its personalized variants; a variant made again by refine
    (a child with role "retry") stands in for its parent."""
    retried = {v.parent_id for v in variants if v.role == RETRY_ROLE}
    return [
        v for v in variants
        if (v.geography_id is not None or (base is not None and v.id == base.id)
            or v.role == RETRY_ROLE)
        and v.id not in retried
    ]  # fmt: skip


def _file(tenant, role: str, asset_id: int) -> StoredFile:
    asset = tenant.assets.get(asset_id)
    return StoredFile(role, asset.id, tenant.assets.path(asset.id), asset.sha256)
