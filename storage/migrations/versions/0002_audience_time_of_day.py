"""audiences: the light of the backgrounds a variant for them gets

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 22:40:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("audiences", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("time_of_day", sa.String(length=20), server_default="day", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("audiences", schema=None) as batch_op:
        batch_op.drop_column("time_of_day")
