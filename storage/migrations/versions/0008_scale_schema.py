"""drop scenes and brand kits; variants indexed for a run's progress and a spot's gallery

Two indexes replace single-column ones: (run, status, business_id) the one on run, so a run's
progress (its variants counted by status, inside one business) is read from the index without
the rows; (spot_id, id) the one on spot_id, so a page of a spot's newest variants is read in
id order and stops at its limit (PostgreSQL does not keep equal keys in id order).

The scenes and brand_kits tables go: the app never wrote either. A spot's scenes are built from
its template and brief each time, and the brief holds what a business chooses about them (scene
order, a scene's own seed) and its brand (colours, logo, fonts); each variant keeps its own copy
of all of it (see `storage.models`). The downgrade makes the two tables again, empty.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 09:00:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table("variants", schema=None) as batch_op:
        batch_op.create_index(
            "ix_variants_run_status_business_id", ["run", "status", "business_id"], unique=False
        )
        batch_op.drop_index(batch_op.f("ix_variants_run"))
        batch_op.create_index("ix_variants_spot_id_id", ["spot_id", "id"], unique=False)
        batch_op.drop_index(batch_op.f("ix_variants_spot_id"))
    with op.batch_alter_table("scenes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_scenes_spot_id"))
        batch_op.drop_index(batch_op.f("ix_scenes_business_id"))
    op.drop_table("scenes")
    op.drop_table("brand_kits")


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("variants", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_variants_spot_id"), ["spot_id"], unique=False)
        batch_op.drop_index("ix_variants_spot_id_id")
        batch_op.create_index(batch_op.f("ix_variants_run"), ["run"], unique=False)
        batch_op.drop_index("ix_variants_run_status_business_id")
    op.create_table(
        "brand_kits",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("business_id", sa.Integer(), nullable=False),
        sa.Column("colors", sa.JSON(), nullable=False),
        sa.Column("heading_font_asset_id", sa.Integer(), nullable=True),
        sa.Column("body_font_asset_id", sa.Integer(), nullable=True),
        sa.Column("logo_asset_id", sa.Integer(), nullable=True),
        sa.Column("tagline", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["body_font_asset_id"],
            ["assets.id"],
            name=op.f("fk_brand_kits_body_font_asset_id_assets"),
        ),
        sa.ForeignKeyConstraint(
            ["business_id"],
            ["businesses.id"],
            name=op.f("fk_brand_kits_business_id_businesses"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["heading_font_asset_id"],
            ["assets.id"],
            name=op.f("fk_brand_kits_heading_font_asset_id_assets"),
        ),
        sa.ForeignKeyConstraint(
            ["logo_asset_id"], ["assets.id"], name=op.f("fk_brand_kits_logo_asset_id_assets")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_brand_kits")),
        sa.UniqueConstraint("business_id", name=op.f("uq_brand_kits_business_id")),
    )
    op.create_table(
        "scenes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("business_id", sa.Integer(), nullable=False),
        sa.Column("spot_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("visual_request", sa.JSON(), nullable=False),
        sa.Column("copy", sa.JSON(), nullable=False),
        sa.Column("start_s", sa.Float(), nullable=False),
        sa.Column("duration_s", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["business_id"],
            ["businesses.id"],
            name=op.f("fk_scenes_business_id_businesses"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["spot_id"], ["spots.id"], name=op.f("fk_scenes_spot_id_spots"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_scenes")),
        sa.UniqueConstraint("spot_id", "position", name=op.f("uq_scenes_spot_id")),
    )
    with op.batch_alter_table("scenes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_scenes_business_id"), ["business_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_scenes_spot_id"), ["spot_id"], unique=False)
