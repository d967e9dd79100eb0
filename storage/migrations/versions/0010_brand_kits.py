"""brand kits again: what a business's next brief starts from

0008 dropped a `brand_kits` table that nothing wrote. This one is written by every spot made
from a brief (its colours, logo and fonts, web address, phone and tagline become the business's
kit) and read by the brief page, which opens prefilled from it, and by the next brief, which
reuses the kit's logo and fonts when none is uploaded: a returning owner no longer starts from
a blank brief and default colours. One row per business; the files are its own stored assets.
Each spot still keeps its own brand in its brief, so a kit changed later changes no spot.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 09:00:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _asset(role: str) -> sa.Column:
    return sa.Column(
        f"{role}_asset_id",
        sa.Integer(),
        sa.ForeignKey("assets.id", name=f"fk_brand_kits_{role}_asset_id_assets"),
        nullable=True,
    )


def upgrade() -> None:
    op.create_table(
        "brand_kits",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("business_id", sa.Integer(), nullable=False),
        sa.Column("colors", sa.JSON(), nullable=False),
        _asset("logo"),
        _asset("heading_font"),
        _asset("body_font"),
        sa.Column("cta_url", sa.String(length=120), nullable=False),
        sa.Column("phone", sa.String(length=40), nullable=False),
        sa.Column("tagline", sa.String(length=120), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["business_id"],
            ["businesses.id"],
            name=op.f("fk_brand_kits_business_id_businesses"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_brand_kits")),
        sa.UniqueConstraint("business_id", name=op.f("uq_brand_kits_business_id")),
    )


def downgrade() -> None:
    op.drop_table("brand_kits")
