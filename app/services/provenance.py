"""Content Credentials for every final: what the manifest says (the variant's lineage, model and
recipe), who signs it, and reading a file back.

A final is signed after its QC and before it is stored, so the stored asset, its sha256 and
every download carry the manifest. The key and certificate chain are the configured ones
(SPOTFORGE_SIGNING_KEY / SPOTFORGE_SIGNING_CERT); without them a development CA and signer are
made once in `Settings.resolved_signing_dir`, which is outside every folder the app serves.
"""

from __future__ import annotations

from dataclasses import asdict
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

from app.config import Settings
from app.services.errors import UserError
from storage import GenerationParams
from templates import provenance
from templates.provenance import Credentials, Verification

if TYPE_CHECKING:
    from app.services.context import AppContext

GENERATOR = "Spotforge"
# Generation parameters a manifest declares; the copy and brand files in `extra` are the
# spot's words and pictures, which the file itself shows.
DECLARED = ("task", "prompt", "negative_prompt", "seed", "steps", "guidance", "width", "height")


def credentials(settings: Settings) -> Credentials:
    """The configured signer, or the development one (made on first use)."""
    key, chain = settings.signing_key, settings.signing_cert
    if (key is None) != (chain is None):
        raise UserError("Set both SPOTFORGE_SIGNING_KEY and SPOTFORGE_SIGNING_CERT, or neither.")
    if key is not None and chain is not None:
        for path in (key, chain):
            if not Path(path).is_file():
                raise UserError(f"The signing file {path} does not exist.")
        return Credentials(Path(key), Path(chain))
    return provenance.development_credentials(settings.resolved_signing_dir, GENERATOR)


def assertions(ctx: AppContext, business_id: int, variant_id: int, shape: str) -> dict:
    """The manifest's own assertions for a variant's final in a shape, from its lineage."""
    with ctx.tenant(business_id) as tenant:
        variant = tenant.variants.get(variant_id)
        spot = tenant.campaigns.spot(variant.spot_id)
        params = GenerationParams.of(variant)
        previews = [r for r in tenant.variants.renders(variant_id) if r.tier == "preview"]
        preview = None
        if previews:  # the one the owner saw last, which the final matches
            shown = previews[-1]
            preview = {"render": shown.id, "sha256": tenant.assets.get(shown.asset_id).sha256}
        lineage = {
            "variant": variant.id,
            "parent": variant.parent_id,
            "spot": spot.id,
            "shape": shape,
            "approved_preview": preview,
        }
        recipe = {
            "recipe": params.recipe,
            "template": spot.template_id,
            "template_version": spot.template_version,
        }
    from engine import ModelUnavailable, preset_for  # torch loads only where a final is made

    try:
        licence = preset_for(params.model_id).licence
    except ModelUnavailable:  # a preset since removed: its id and revision still say which
        licence = "unknown"
    model = {
        "preset": params.model_id,
        "revision": params.model_revision,
        "licence": licence,
        "engine_version": params.engine_version,
        "parameters": {k: v for k, v in asdict(params).items() if k in DECLARED},
    }
    return {provenance.LINEAGE: lineage, provenance.MODEL: model, provenance.RECIPE: recipe}


def sign_final(
    ctx: AppContext, business_id: int, variant_id: int, path: Path, *, shape: str = "16:9"
) -> None:
    """Sign a final master in place (after its QC, before it is stored)."""
    provenance.sign(
        path,
        path,
        credentials(ctx.settings),
        title=Path(path).name,
        generator=(GENERATOR, _version()),
        assertions=assertions(ctx, business_id, variant_id, shape),
    )


def verify(settings: Settings, path: Path) -> Verification:
    """A file's manifest and whether the file still matches it, read afresh; the development
    CA counts as trusted when it is the signer in use."""
    anchors = provenance.development_paths(settings.resolved_signing_dir).anchors
    in_use = settings.signing_key is None and anchors.is_file()
    return provenance.read(path, anchors if in_use else None)


def _version() -> str:
    try:
        return version("spotforge")
    except PackageNotFoundError:  # run from a checkout that is not installed
        return "dev"
