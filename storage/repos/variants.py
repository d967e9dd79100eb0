"""Variants of a spot, their renders, and lineage: parents, children, and asset provenance."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from sqlalchemy import func, insert, literal, select, update

from storage.errors import NotFound
from storage.models import (
    Asset,
    Audience,
    Geography,
    Render,
    RenderTier,
    Spot,
    Variant,
    VariantStatus,
    utcnow,
)
from storage.scope import Scope

CHUNK = 1000  # ids or keys per IN (...) list, well inside SQLite's and PostgreSQL's limits


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

    def columns(self, *, deep: bool = True) -> dict[str, Any]:
        """The variant's columns; `deep=False` shares `extra` rather than copying it."""
        shallow = {f.name: getattr(self, f.name) for f in fields(self)}
        values = asdict(self) if deep else shallow
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

    def create_many(
        self,
        spot_id: int,
        cells: Sequence[tuple[GenerationParams, int | None, int | None]],
        *,
        parent_id: int | None = None,
    ) -> list[int]:
        """Variants of one spot, each (params, geography id, audience id), written in bulk: the
        spot, parent, geographies and audiences are checked once each (this business's, or
        built-in), not once a row. Returns their ids in the order given."""
        spot = self._scope.get(Spot, spot_id)
        if parent_id is not None:
            self.get(parent_id)
        self._check_ids(Geography, {g for _, g, _ in cells if g is not None})
        self._check_ids(Audience, {a for _, _, a in cells if a is not None})
        now = utcnow()
        rows = [
            {
                **params.columns(deep=False),  # the rows go straight into the INSERT
                "business_id": self._scope.business_id,
                "spot_id": spot.id,
                "geography_id": geography_id,
                "audience_id": audience_id,
                "parent_id": parent_id,
                "run": params.extra.get("run"),
                "role": params.extra.get("role"),
                "status": VariantStatus.PLANNED,
                "created_at": now,
                "updated_at": now,
            }
            for params, geography_id, audience_id in cells
        ]
        if not rows:
            return []
        query = insert(Variant).returning(Variant.id, sort_by_parameter_order=True)
        return list(self._scope.session.scalars(query, rows))

    def _check_ids(self, model: type[Geography] | type[Audience], ids: set[int]) -> None:
        for chunk in _chunks(sorted(ids)):
            found = set(
                self._scope.session.scalars(
                    self._scope.select(model, shared=True)
                    .where(model.id.in_(chunk))
                    .with_only_columns(model.id)
                )
            )
            missing = [i for i in chunk if i not in found]
            if missing:
                raise NotFound(model.__name__.lower(), missing[0])

    def get(self, variant_id: int) -> Variant:
        return self._scope.get(Variant, variant_id)

    def some(self, variant_ids: Sequence[int]) -> list[Variant]:
        """Those of these variants that are this business's (the others are left out)."""
        found: list[Variant] = []
        for chunk in _chunks(sorted(set(variant_ids))):
            found += self._scope.all(self._scope.select(Variant).where(Variant.id.in_(chunk)))
        return found

    def list(self, spot_id: int) -> list[Variant]:
        self._scope.get(Spot, spot_id)
        return self._scope.all(
            self._scope.select(Variant).where(Variant.spot_id == spot_id).order_by(Variant.id)
        )

    def newest(
        self,
        spot_id: int,
        *,
        limit: int | None,
        geography_id: int | None = None,
        audience_id: int | None = None,
        personalized_only: bool = False,
    ) -> list[Variant]:
        """The spot's newest `limit` variants (all: None; of one geography or audience, if
        given; only the personalized ones, not its bases, with `personalized_only`), oldest
        first. The
        filter and the limit are the database's, so a page costs the same however many
        variants the spot has."""
        self._scope.get(Spot, spot_id)
        query = self._scope.select(Variant).where(Variant.spot_id == spot_id)
        if geography_id is not None:
            query = query.where(Variant.geography_id == geography_id)
        if audience_id is not None:
            query = query.where(Variant.audience_id == audience_id)
        if personalized_only:
            query = query.where(Variant.geography_id.is_not(None))
        page = self._scope.all(query.order_by(Variant.id.desc()).limit(limit))
        return page[::-1]

    def newest_run(self, spot_id: int) -> str | None:
        """The key of the newest bulk run that made variants of the spot; None before any."""
        self._scope.get(Spot, spot_id)
        query = (
            self._scope.select(Variant)
            .where(Variant.spot_id == spot_id, Variant.run.is_not(None))
            .with_only_columns(Variant.run)
            .order_by(Variant.id.desc())
        )
        return self._scope.session.scalars(query).first()

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

    def run_cells(self, run: str) -> set[tuple[int, int | None, int | None]]:
        """The (spot, geography, audience) of each of a run's variants: what a run started
        again already has, read from three columns (no row loaded)."""
        query = (
            self._scope.select(Variant)
            .where(_in_run(run))
            .with_only_columns(Variant.spot_id, Variant.geography_id, Variant.audience_id)
        )
        return {tuple(cell) for cell in self._scope.session.execute(query)}

    def run_ids(self, run: str, statuses: Collection[VariantStatus] | None = None) -> list[int]:
        """The ids of a run's variants (in one of `statuses`, if given), oldest first."""
        query = self._scope.select(Variant).where(_in_run(run)).with_only_columns(Variant.id)
        if statuses is not None:
            query = query.where(Variant.status.in_(list(statuses)))
        return list(self._scope.session.scalars(query.order_by(Variant.id)))

    def set_run_status(
        self, run: str, status: VariantStatus | str, *, among: Collection[VariantStatus]
    ) -> int:
        """Move a run's variants that are in one of `among` to `status`, in one UPDATE; how
        many moved."""
        result = self._scope.session.execute(
            update(Variant)
            .where(Variant.business_id == self._scope.business_id, _in_run(run))
            .where(Variant.status.in_(list(among)))
            .values(status=VariantStatus(status), updated_at=utcnow())
            .execution_options(synchronize_session="fetch")
        )
        return result.rowcount

    def run_workers(self, run: str) -> dict[str, int]:
        """How many of a run's key frames each worker made, counted by the database."""
        query = (
            self._scope.select(Render)
            .join(Variant, Render.variant_id == Variant.id)
            .where(_in_run(run), Render.tier == RenderTier.FRAME)
            .with_only_columns(Render.worker, func.count())
            .group_by(Render.worker)
        )
        # Frames made before workers were recorded (migration 0007) have none.
        return {worker or "unknown": n for worker, n in self._scope.session.execute(query)}

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
        worker: str | None = None,
        shape: str = "16:9",
    ) -> Render:
        variant = self.get(variant_id)
        asset = self._scope.get(Asset, asset_id)
        return self._scope.add(
            Render(
                variant_id=variant.id,
                tier=RenderTier(tier),
                shape=shape,
                asset_id=asset.id,
                qc_report=qc_report,
                timings=dict(timings or {}),
                worker=worker,
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

    def add_destination_report(self, render_id: int, destination: str, report: dict) -> Render:
        """The render checked against one more destination's spec: kept in its QC report
        under "destinations", beside the check it had when it was made."""
        render = self.render(render_id)
        qc = dict(render.qc_report or {})
        qc["destinations"] = {**qc.get("destinations", {}), destination: report}
        render.qc_report = qc  # a new dict: the JSON column sees the change
        return render

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


def _chunks(items: Sequence[Any], size: int = CHUNK) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]
