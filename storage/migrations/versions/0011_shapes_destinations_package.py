"""shapes, destinations and a delivery package for an order; a shape for each render

An order now buys each of its variants in one or more shapes (16:9, 9:16, 1:1) for one or more
destinations (the specs in `templates.qc_specs`), and is delivered as one zip. A render records
the shape it was laid out for. Existing renders were all 16:9, and existing orders bought the
16:9 broadcast master, which is what the defaults say.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04 09:00:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("renders", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("shape", sa.String(length=5), server_default="16:9", nullable=False)
        )
    with op.batch_alter_table("orders", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("shapes", sa.JSON(), server_default=sa.text("'[\"16:9\"]'"), nullable=False)
        )
        batch_op.add_column(
            sa.Column(
                "destinations",
                sa.JSON(),
                server_default=sa.text("'[\"broadcast\"]'"),
                nullable=False,
            )
        )
        batch_op.add_column(sa.Column("package_asset_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            "fk_orders_package_asset_id_assets", "assets", ["package_asset_id"], ["id"]
        )


def downgrade() -> None:
    with op.batch_alter_table("orders", schema=None) as batch_op:
        batch_op.drop_constraint("fk_orders_package_asset_id_assets", type_="foreignkey")
        batch_op.drop_column("package_asset_id")
        batch_op.drop_column("destinations")
        batch_op.drop_column("shapes")
    with op.batch_alter_table("renders", schema=None) as batch_op:
        batch_op.drop_column("shape")
