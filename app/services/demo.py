"""The whole journey offline, on scikit-image's espresso photograph: a business, a campaign, a
15 s spot, 2 geographies x 2 audiences, each variant's frame, preview and broadcast final with
their QC reports. What `spotforge demo` runs."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

from PIL import Image
from skimage import data

from app.config import Settings
from app.services import bulk, businesses, library
from app.services.context import AppContext, open_engine
from app.services.matrix import plan_matrix
from app.services.renders import render_variant
from app.services.spots import SAMPLE_COPY
from templates.spec import load_template

BRIEF = SAMPLE_COPY
GEOGRAPHIES = ("San Francisco Bay Area", "Manhattan")
AUDIENCES = ("Young runners", "Retirees")


def run_demo(out: Path, settings: Settings, tiers: tuple[str, ...] = ("preview", "final")) -> dict:
    """Everything lands in `out` (its own database and asset store under out/var); returns the
    summary: the paths of every file made and the QC verdicts."""
    out.mkdir(parents=True, exist_ok=True)
    settings = settings.model_copy(update={"data_dir": out / "var", "database_url": None})
    ctx = AppContext.open(settings)
    try:
        business = businesses.create(ctx, BRIEF["business_name"]).id
        photo = io.BytesIO()
        Image.fromarray(data.coffee()).save(photo, format="PNG")
        with ctx.tenant(business) as tenant:
            asset = tenant.assets.add(photo.getvalue(), "espresso.png")
            campaign = tenant.campaigns.create("Espresso week", "Morning foot traffic")
            spot = tenant.campaigns.create_spot(
                campaign.id,
                template_id="product-hero",
                template_version=load_template("product-hero").version,
                duration_s=15,
                copy=BRIEF,
                product_asset_ids=[asset.id],
            ).id
        geographies = _ids(library.geographies(ctx, business), GEOGRAPHIES)
        audiences = _ids(library.audiences(ctx, business), AUDIENCES)
        with open_engine(settings, max_batch=1) as engine:
            plan = plan_matrix(
                ctx, engine, business, [spot], geographies, audiences, preset=settings.model
            )
            run = bulk.start(ctx, engine, business, plan)
            report = bulk.work(ctx, engine, business, run)
            variants: list[dict[str, Any]] = []
            with ctx.tenant(business) as tenant:
                made = [
                    (v.id, v.geography_id, v.audience_id)
                    for v in tenant.variants.of_run(report.run)
                ]
                frames = {
                    v: tenant.assets.path(tenant.variants.renders(v)[0].asset_id)
                    for v, _, _ in made
                }
            place = {g.id: g.name for g in plan.geographies}
            people = {a.id: a.name for a in plan.audiences}
            for variant_id, geography_id, audience_id in made:
                stem = f"variant-{variant_id}"
                entry: dict[str, Any] = {
                    "variant": variant_id,
                    "geography": place[geography_id],
                    "audience": people[audience_id],
                    "frame": str(_copy(frames[variant_id], out / "frames" / f"{stem}.png")),
                }
                for tier in tiers:
                    rendered = render_variant(ctx, engine, business, variant_id, tier)
                    video = _copy(rendered.path, out / tier / f"{stem}.mp4")
                    qc_path = video.with_suffix(".qc.json")
                    qc_path.write_text(json.dumps(rendered.qc_report, indent=2))
                    entry[tier] = {
                        "file": str(video),
                        "qc": str(qc_path),
                        "qc_passed": rendered.qc_passed,
                    }
                variants.append(entry)
    finally:
        ctx.close()
    return {
        "out": str(out),
        "business": business,
        "spot": spot,
        "variants": variants,
        "backgrounds_reuse_ratio": report.backgrounds.to_dict()["ratio"],
        "all_qc_passed": all(v[t]["qc_passed"] for v in variants for t in tiers),
    }


def _ids(views, names) -> list[int]:
    by_name = {v.name: v.id for v in views}
    return [by_name[n] for n in names]


def _copy(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target
