"""Variants of a spot, their renders, and lineage: parents, children, and asset provenance."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import func, literal, select

from storage.models import (
    Asset,
    Audience,
    Geography,
    Render,
    RenderTier,
    Spot,
    Variant,
    VariantStatus,
)
from storage.scope import Scope


@dataclass(frozen=True)
class GenerationParams:
    """Everything that determines a generated result; stored on every variant."""

    model_id: str
    model_revision: str
    task: str
    prompt: str
    seed: int
    steps: int
    guidance: float
    width: int
    height: int
    recipe: str
    engine_version: str
    negative_prompt: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, variant: Variant) -> GenerationParams:
        names = [f for f in cls.__dataclass_fields__ if f != "extra"]
        return cls(**{n: getattr(variant, n) for n in names}, extra=dict(variant.extra_params))

    def columns(self) -> dict[str, Any]:
        values = asdict(self)
        values["extra_params"] = values.pop("extra")
        return values


@dataclass(frozen=True)
class Provenance:
    """Where an asset came from: an upload (no variant), or a render of a variant."""

    asset: Asset
    render: Render | None
    variant: Variant | None
    params: GenerationParams | None
    ancestors: list[Variant]


class Variants:
    def __init__(self, scope: Scope):
        self._scope = scope

    def create(
        self,
        spot_id: int,
        params: GenerationParams,
        *,
        geography_id: int | None = None,
        audience_id: int | None = None,
        parent_id: int | None = None,
    ) -> Variant:
        spot = self._scope.get(Spot, spot_id)
        if geography_id is not None:
            self._scope.get(Geography, geography_id, shared=True)
        if audience_id is not None:
            self._scope.get(Audience, audience_id, shared=True)
        if parent_id is not None:
            self.get(parent_id)
        return self._scope.add(
            Variant(
                spot_id=spot.id,
                geography_id=geography_id,
                audience_id=audience_id,
                parent_id=parent_id,
                run=params.extra.get("run"),
                role=params.extra.get("role"),
                **params.columns(),
            )
        )

    def get(self, variant_id: int) -> Variant:
        return self._scope.get(Variant, variant_id)

    def list(self, spot_id: int) -> list[Variant]:
        self._scope.get(Spot, spot_id)
        return self._scope.all(
            self._scope.select(Variant).where(Variant.spot_id == spot_id).order_by(Variant.id)
        )

    def of_run(self, run: str) -> list[Variant]:
        """The variants a bulk run made (the indexed `run` column), oldest first."""
        return self._scope.all(self._scope.select(Variant).where(_in_run(run)).order_by(Variant.id))

    def base_of(self, spot_id: int) -> Variant | None:
        """The spot's current base variant (the creative as briefed, role "base"; the newest,
        when another background was chosen), parent of the personalized variants made from it."""
        self._scope.get(Spot, spot_id)
        query = self._scope.select(Variant).where(
            Variant.spot_id == spot_id, Variant.role == "base"
        )
        return self._scope.session.scalars(query.order_by(Variant.id.desc())).first()

    def run_counts(self, run: str) -> dict[VariantStatus, int]:
        """How many of a run's variants are in each status, counted by the database."""
        query = (
            self._scope.select(Variant)
            .where(_in_run(run))
            .with_only_columns(Variant.status, func.count())
            .group_by(Variant.status)
        )
        counts = dict.fromkeys(VariantStatus, 0)
        counts.update({status: n for status, n in self._scope.session.execute(query)})
        return counts

    def set_status(
        self, variant_id: int, status: VariantStatus | str, error: str | None = None
    ) -> Variant:
        variant = self.get(variant_id)
        variant.status = VariantStatus(status)
        variant.last_error = error
        return variant

    def add_render(
        self,
        variant_id: int,
        *,
        tier: RenderTier | str,
        asset_id: int,
        qc_report: dict[str, Any] | None = None,
        timings: dict[str, float] | None = None,
    ) -> Render:
        variant = self.get(variant_id)
        asset = self._scope.get(Asset, asset_id)
        return self._scope.add(
            Render(
                variant_id=variant.id,
                tier=RenderTier(tier),
                asset_id=asset.id,
                qc_report=qc_report,
                timings=dict(timings or {}),
            )
        )

    def recent_render_seconds(self, tier: RenderTier, limit: int = 20) -> list[float]:
        """How long this business's latest renders of a tier took, end to end."""
        rows = self._scope.all(
            self._scope.select(Render)
            .where(Render.tier == tier)
            .order_by(Render.id.desc())
            .limit(limit)
        )
        return [float(r.timings["total"]) for r in rows if "total" in r.timings]

    def frames(self, variant_ids: list[int]) -> dict[int, int]:
        """The newest key-frame asset of each of these variants that has one, in one query."""
        query = (
            self._scope.select(Render)
            .where(Render.variant_id.in_(variant_ids), Render.tier == RenderTier.FRAME)
            .order_by(Render.id)
        )
        return {r.variant_id: r.asset_id for r in self._scope.all(query)}

    def render(self, render_id: int) -> Render:
        return self._scope.get(Render, render_id)

    def renders(self, variant_id: int) -> list[Render]:
        self.get(variant_id)
        return self._scope.all(
            self._scope.select(Render).where(Render.variant_id == variant_id).order_by(Render.id)
        )

    def ancestors(self, variant_id: int) -> list[Variant]:
        """Parent first, root last."""
        return self._walk(variant_id, up=True)

    def descendants(self, variant_id: int) -> list[Variant]:
        """Children first, then grandchildren, and so on."""
        return self._walk(variant_id, up=False)

    def provenance(self, asset_id: int) -> Provenance:
        asset = self._scope.get(Asset, asset_id)
        render = self._scope.session.scalars(
            self._scope.select(Render).where(Render.asset_id == asset.id).order_by(Render.id)
        ).first()
        if render is None:
            return Provenance(asset, None, None, None, [])
        variant = self.get(render.variant_id)
        return Provenance(
            asset, render, variant, GenerationParams.of(variant), self.ancestors(variant.id)
        )

    def _walk(self, variant_id: int, *, up: bool) -> list[Variant]:
        # One recursive query, so a deep tree costs one round trip (SQLite and PostgreSQL alike).
        start = self.get(variant_id)
        business = Variant.business_id == self._scope.business_id
        tree = (
            select(Variant.id, Variant.parent_id, literal(0).label("depth"))
            .where(Variant.id == start.id, business)
            .cte("tree", recursive=True)
        )
        link = Variant.id == tree.c.parent_id if up else Variant.parent_id == tree.c.id
        tree = tree.union_all(
            select(Variant.id, Variant.parent_id, tree.c.depth + 1).join(tree, link).where(business)
        )
        query = (
            select(Variant)
            .join(tree, Variant.id == tree.c.id)
            .where(tree.c.depth > 0)
            .order_by(tree.c.depth, Variant.id)
        )
        return list(self._scope.session.scalars(query))


def _in_run(run: str):
    return Variant.run == run
