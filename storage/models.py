"""The schema, as SQLAlchemy 2.0 typed ORM classes. Every change here needs an Alembic revision.

Every table that holds a business's data carries `business_id`, copied from the parent row
when a child is created through a `Tenant`; scoped reads then need no joins to stay inside one
business. Geographies and audiences with a NULL business are the built-in library.

A spot's scenes and its brand have no tables of their own (migration 0008 dropped `scenes` and
`brand_kits`, which nothing had ever written). The scenes are not data: the storyboard is built
from the template and the brief each time (`templates.storyboard.build_storyboard`), and the
only choices a business makes about them, their order and a scene's own background seed, sit
in the spot's brief (`Spot.copy["scene_order"]`, `["scene_seeds"]`). The brand (colours, logo,
fonts) is part of each brief, so each spot keeps the brand it was made with; `BrandKit` is
only what the business's next brief starts from (migration 0010). Each variant copies all of it
into its `extra_params` when it is made, so it renders the same whatever changes later; a
second copy in rows would be one more thing to keep in step, and no query filters on any of it.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
    Enum,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC in Python on every backend (SQLite would hand back naive values)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("naive datetime given to the database; use storage.models.utcnow()")
        return value.astimezone(UTC) if value is not None else None

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


class Base(DeclarativeBase):
    # Named constraints, so migrations can alter them on SQLite (batch mode) and PostgreSQL alike.
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(column_0_label)s",
            "uq": "uq_%(table_name)s_%(column_0_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )
    type_annotation_map: ClassVar = {dict[str, Any]: JSON, list[Any]: JSON, datetime: UTCDateTime}


def _enum(cls: type[enum.Enum]) -> Enum:
    # Stored as plain strings (portable; no native PostgreSQL enum types to migrate).
    return Enum(cls, native_enum=False, length=16, values_callable=lambda e: [m.value for m in e])


class Timestamps:
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


def _business_fk(nullable: bool = False) -> Mapped[Any]:
    return mapped_column(
        ForeignKey("businesses.id", ondelete="CASCADE"), index=True, nullable=nullable
    )


class Business(Timestamps, Base):
    __tablename__ = "businesses"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(120))


class BrandKit(Timestamps, Base):
    """What stays the same across a business's campaigns, saved from its last brief so the next
    one starts from it: colours, logo and fonts (its own stored assets) and the end card's
    details. Each spot still keeps its own brand in its brief (see the module docstring)."""

    __tablename__ = "brand_kits"
    id: Mapped[int] = mapped_column(primary_key=True)
    business_id: Mapped[int] = mapped_column(
        ForeignKey("businesses.id", ondelete="CASCADE"), unique=True
    )
    colors: Mapped[list[Any]] = mapped_column(default=list)  # #RRGGBB, primary first
    logo_asset_id: Mapped[int | None] = mapped_column(ForeignKey("assets.id"))
    heading_font_asset_id: Mapped[int | None] = mapped_column(ForeignKey("assets.id"))
    body_font_asset_id: Mapped[int | None] = mapped_column(ForeignKey("assets.id"))
    cta_url: Mapped[str] = mapped_column(String(120), default="")
    phone: Mapped[str] = mapped_column(String(40), default="")
    tagline: Mapped[str] = mapped_column(String(120), default="")


class User(Timestamps, Base):
    """A person who signs in; each belongs to one business and sees only its data."""

    __tablename__ = "users"
    id: Mapped[int] = mapped_column(primary_key=True)
    business_id: Mapped[int] = _business_fk()
    email: Mapped[str] = mapped_column(String(254), unique=True)  # stored lower-cased
    password_hash: Mapped[str] = mapped_column(String(255))  # scrypt, with its salt and costs


class UserSession(Base):
    """A signed-in browser or API client. Only a hash of the token is stored."""

    __tablename__ = "user_sessions"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()


class CampaignStatus(enum.StrEnum):
    DRAFT = "draft"
    ACTIVE = "active"
    PAUSED = "paused"
    ARCHIVED = "archived"


class Campaign(Timestamps, Base):
    __tablename__ = "campaigns"
    id: Mapped[int] = mapped_column(primary_key=True)
    business_id: Mapped[int] = _business_fk()
    name: Mapped[str] = mapped_column(String(120))
    objective: Mapped[str] = mapped_column(String(500), default="")
    status: Mapped[CampaignStatus] = mapped_column(
        _enum(CampaignStatus), default=CampaignStatus.DRAFT
    )
    spots: Mapped[list[Spot]] = relationship(back_populates="campaign", cascade="all")


class Geography(Timestamps, Base):
    """A place a variant is set in; its descriptors are folded into background prompts."""

    __tablename__ = "geographies"
    __table_args__ = (UniqueConstraint("business_id", "name"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    business_id: Mapped[int | None] = _business_fk(nullable=True)
    name: Mapped[str] = mapped_column(String(120))
    region: Mapped[str] = mapped_column(String(120), default="")
    landscape: Mapped[str] = mapped_column(String(300), default="")
    landmarks: Mapped[str] = mapped_column(String(300), default="")
    architecture: Mapped[str] = mapped_column(String(300), default="")
    weather: Mapped[str] = mapped_column(String(120), default="")
    time_of_day: Mapped[str] = mapped_column(String(60), default="")
    # The business's own picture behind its variants here, instead of a generated one, and
    # the point [x, y] (shares of its size) it is cropped around.
    background_asset_id: Mapped[int | None] = mapped_column(ForeignKey("assets.id"))
    background_focus: Mapped[list[Any] | None] = mapped_column()


class Audience(Timestamps, Base):
    __tablename__ = "audiences"
    __table_args__ = (UniqueConstraint("business_id", "name"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    business_id: Mapped[int | None] = _business_fk(nullable=True)
    name: Mapped[str] = mapped_column(String(120))
    age_band: Mapped[str] = mapped_column(String(30), default="")
    interests: Mapped[list[Any]] = mapped_column(default=list)
    tone: Mapped[str] = mapped_column(String(120), default="")
    palette_hints: Mapped[list[Any]] = mapped_column(default=list)
    # The light of their backgrounds: day, golden or night.
    time_of_day: Mapped[str] = mapped_column(String(20), default="day", server_default="day")
    offer_emphasis: Mapped[str] = mapped_column(String(40), default="", server_default="")
    call_to_action: Mapped[str] = mapped_column(String(80), default="", server_default="")


spot_product_assets = Table(
    "spot_product_assets",
    Base.metadata,
    Column("spot_id", ForeignKey("spots.id", ondelete="CASCADE"), primary_key=True),
    Column("asset_id", ForeignKey("assets.id"), primary_key=True),
)


class Spot(Timestamps, Base):
    __tablename__ = "spots"
    id: Mapped[int] = mapped_column(primary_key=True)
    business_id: Mapped[int] = _business_fk()
    campaign_id: Mapped[int] = mapped_column(
        ForeignKey("campaigns.id", ondelete="CASCADE"), index=True
    )
    template_id: Mapped[str] = mapped_column(String(80))
    template_version: Mapped[str] = mapped_column(String(40))
    duration_s: Mapped[float] = mapped_column(Float)
    # The brief: its copy, brand colours, "brand_assets" (logo and font asset ids), and the
    # storyboard's "scene_order" and "scene_seeds" (see the module docstring).
    copy: Mapped[dict[str, Any]] = mapped_column(default=dict)
    campaign: Mapped[Campaign] = relationship(back_populates="spots")
    product_assets: Mapped[list[Asset]] = relationship(secondary=spot_product_assets)


class VariantStatus(enum.StrEnum):
    PLANNED = "planned"
    QUEUED = "queued"
    RENDERING = "rendering"
    READY = "ready"
    APPROVED = "approved"
    FAILED = "failed"
    CANCELLED = "cancelled"  # its run was stopped before it was made


class Variant(Timestamps, Base):
    """One version of a spot, with everything needed to generate it again bit for bit."""

    __tablename__ = "variants"
    id: Mapped[int] = mapped_column(primary_key=True)
    business_id: Mapped[int] = _business_fk()
    spot_id: Mapped[int] = mapped_column(ForeignKey("spots.id", ondelete="CASCADE"))
    geography_id: Mapped[int | None] = mapped_column(ForeignKey("geographies.id"))
    audience_id: Mapped[int | None] = mapped_column(ForeignKey("audiences.id"))
    parent_id: Mapped[int | None] = mapped_column(
        ForeignKey("variants.id", ondelete="SET NULL"), index=True
    )
    # Generation parameters.
    model_id: Mapped[str] = mapped_column(String(200))
    model_revision: Mapped[str] = mapped_column(String(80))
    task: Mapped[str] = mapped_column(String(40))
    prompt: Mapped[str] = mapped_column(Text)
    negative_prompt: Mapped[str] = mapped_column(Text, default="")
    seed: Mapped[int] = mapped_column(BigInteger)
    steps: Mapped[int] = mapped_column(Integer)
    guidance: Mapped[float] = mapped_column(Float)
    width: Mapped[int] = mapped_column(Integer)
    height: Mapped[int] = mapped_column(Integer)
    recipe: Mapped[str] = mapped_column(String(40))
    engine_version: Mapped[str] = mapped_column(String(40))
    extra_params: Mapped[dict[str, Any]] = mapped_column(default=dict)  # task-specific inputs
    # What queries filter on, as columns (set from extra_params when the variant is made): the
    # bulk run that made it, and "base" for a spot's creative as briefed.
    run: Mapped[str | None] = mapped_column(String(32))
    role: Mapped[str | None] = mapped_column(String(16))
    status: Mapped[VariantStatus] = mapped_column(
        _enum(VariantStatus), default=VariantStatus.PLANNED
    )
    last_error: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        Index("ix_variants_spot_id_role", "spot_id", "role"),
        # A spot's newest variants (a gallery page) read in id order, limit included.
        Index("ix_variants_spot_id_id", "spot_id", "id"),
        # A run's variants counted by status (its progress) from the index alone, business
        # filter included; a run's rows found by its key.
        Index("ix_variants_run_status_business_id", "run", "status", "business_id"),
    )


class RenderTier(enum.StrEnum):
    FRAME = "frame"  # a still: the variant's key frame, what a gallery shows
    PREVIEW = "preview"  # the spot, small and watermarked, to see before paying
    FINAL = "final"  # the broadcast file


class Render(Base):
    __tablename__ = "renders"
    id: Mapped[int] = mapped_column(primary_key=True)
    business_id: Mapped[int] = _business_fk()
    variant_id: Mapped[int] = mapped_column(
        ForeignKey("variants.id", ondelete="CASCADE"), index=True
    )
    tier: Mapped[RenderTier] = mapped_column(_enum(RenderTier))
    # The screen's shape it was laid out for (`templates.spec.SHAPES`): one variant has a
    # master per shape bought, each its own render.
    shape: Mapped[str] = mapped_column(String(5), default="16:9", server_default="16:9")
    asset_id: Mapped[int] = mapped_column(ForeignKey("assets.id"), index=True)
    qc_report: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    timings: Mapped[dict[str, Any]] = mapped_column(default=dict)  # stage -> seconds
    # The worker that made it (its lease owner: host, process, role), so a run can say how its
    # work was shared, across reruns and killed workers alike.
    worker: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Asset(Base):
    """A stored file. The bytes live once in the content-addressed store, whoever uploads them;
    each business gets its own row, so ownership is checked without sharing rows."""

    __tablename__ = "assets"
    __table_args__ = (UniqueConstraint("business_id", "sha256"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    business_id: Mapped[int] = _business_fk()
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    media_type: Mapped[str] = mapped_column(String(80))
    bytes: Mapped[int] = mapped_column(BigInteger)
    width: Mapped[int | None] = mapped_column(Integer)
    height: Mapped[int | None] = mapped_column(Integer)
    duration_s: Mapped[float | None] = mapped_column(Float)
    path: Mapped[str] = mapped_column(String(200))  # relative to the asset store root
    original_name: Mapped[str] = mapped_column(String(255), default="")
    # One of the business's own pictures (photos and clips it uploaded to its library).
    in_library: Mapped[bool] = mapped_column(default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Generation(Base):
    """A cached engine result: `key` hashes everything that determines the pixels (model and
    revision, request, seed, recipe, engine version), so the same work is never done twice."""

    __tablename__ = "generations"
    __table_args__ = (UniqueConstraint("business_id", "key"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    business_id: Mapped[int] = _business_fk()
    key: Mapped[str] = mapped_column(String(64))
    asset_id: Mapped[int] = mapped_column(ForeignKey("assets.id"))
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)  # what the engine reported
    seconds: Mapped[float] = mapped_column(Float)  # what it cost, for estimates
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Answer(Base):
    """What an API call with an idempotency key answered, so the same call asked again (an
    agent retrying after a timeout) gets the same answer instead of doing the work twice.
    `response` is None while the first call is still being answered."""

    __tablename__ = "answers"
    __table_args__ = (UniqueConstraint("business_id", "endpoint", "key"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    business_id: Mapped[int] = _business_fk()
    endpoint: Mapped[str] = mapped_column(String(64))
    key: Mapped[str] = mapped_column(String(200))
    response: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class JobStatus(enum.StrEnum):
    QUEUED = "queued"
    LEASED = "leased"
    DONE = "done"
    FAILED = "failed"  # out of attempts
    CANCELLED = "cancelled"  # withdrawn before a worker took it


class Job(Timestamps, Base):
    __tablename__ = "jobs"
    id: Mapped[int] = mapped_column(primary_key=True)
    business_id: Mapped[int | None] = _business_fk(nullable=True)
    kind: Mapped[str] = mapped_column(String(60))
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    priority: Mapped[int] = mapped_column(Integer, default=0)  # higher runs first
    status: Mapped[JobStatus] = mapped_column(_enum(JobStatus), default=JobStatus.QUEUED)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer, default=3)
    run_after: Mapped[datetime] = mapped_column(default=utcnow)  # retry backoff
    lease_owner: Mapped[str | None] = mapped_column(String(120))
    lease_expires_at: Mapped[datetime | None]
    idempotency_key: Mapped[str | None] = mapped_column(String(200), unique=True)
    last_error: Mapped[str | None] = mapped_column(Text)


class OrderStatus(enum.StrEnum):
    DRAFT = "draft"
    QUOTED = "quoted"
    APPROVED = "approved"
    RENDERING = "rendering"
    DELIVERED = "delivered"
    FAILED = "failed"
    CANCELLED = "cancelled"


ORDER_TRANSITIONS: dict[OrderStatus, frozenset[OrderStatus]] = {
    OrderStatus.DRAFT: frozenset({OrderStatus.QUOTED, OrderStatus.CANCELLED}),
    OrderStatus.QUOTED: frozenset({OrderStatus.DRAFT, OrderStatus.APPROVED, OrderStatus.CANCELLED}),
    OrderStatus.APPROVED: frozenset({OrderStatus.RENDERING, OrderStatus.CANCELLED}),
    OrderStatus.RENDERING: frozenset({OrderStatus.DELIVERED, OrderStatus.FAILED}),
    OrderStatus.FAILED: frozenset({OrderStatus.RENDERING, OrderStatus.CANCELLED}),
    OrderStatus.DELIVERED: frozenset(),
    OrderStatus.CANCELLED: frozenset(),
}

order_variants = Table(
    "order_variants",
    Base.metadata,
    Column("order_id", ForeignKey("orders.id", ondelete="CASCADE"), primary_key=True),
    Column("variant_id", ForeignKey("variants.id"), primary_key=True),
)


class Order(Timestamps, Base):
    __tablename__ = "orders"
    id: Mapped[int] = mapped_column(primary_key=True)
    business_id: Mapped[int] = _business_fk()
    status: Mapped[OrderStatus] = mapped_column(_enum(OrderStatus), default=OrderStatus.DRAFT)
    quote_cents: Mapped[int | None] = mapped_column(Integer)
    currency: Mapped[str] = mapped_column(String(3), default="USD")
    # What was bought besides the variants: each in every shape (16:9, 9:16, 1:1), each master
    # QC'd against every destination's spec (`templates.qc_specs.SPECS`).
    shapes: Mapped[list[Any]] = mapped_column(default=lambda: ["16:9"])
    destinations: Mapped[list[Any]] = mapped_column(default=lambda: ["broadcast"])
    # The delivery zip, once the order is delivered.
    package_asset_id: Mapped[int | None] = mapped_column(ForeignKey("assets.id"))
    variants: Mapped[list[Variant]] = relationship(secondary=order_variants)
