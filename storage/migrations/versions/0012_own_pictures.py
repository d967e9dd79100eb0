"""the business's own pictures: a library flag on assets, a picture behind a geography

An owner uploads photos and clips to their library ("Your pictures"); an asset they uploaded
there is marked `in_library` (the other assets are made by Spotforge: backgrounds, renders). A
business's own geography may be set in one of those pictures, cropped around a focus point.
Existing assets are not in the library, and existing geographies keep generated backgrounds.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05 09:00:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("assets", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("in_library", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    with op.batch_alter_table("geographies", schema=None) as batch_op:
        batch_op.add_column(sa.Column("background_asset_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("background_focus", sa.JSON(), nullable=True))
        batch_op.create_foreign_key(
            "fk_geographies_background_asset_id_assets", "assets", ["background_asset_id"], ["id"]
        )


def downgrade() -> None:
    with op.batch_alter_table("geographies", schema=None) as batch_op:
        batch_op.drop_constraint("fk_geographies_background_asset_id_assets", type_="foreignkey")
        batch_op.drop_column("background_focus")
        batch_op.drop_column("background_asset_id")
    with op.batch_alter_table("assets", schema=None) as batch_op:
        batch_op.drop_column("in_library")
