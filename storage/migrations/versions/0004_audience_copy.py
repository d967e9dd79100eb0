"""audiences: what their copy stresses and how it closes

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29 23:10:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("audiences", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("offer_emphasis", sa.String(length=40), server_default="", nullable=False)
        )
        batch_op.add_column(
            sa.Column("call_to_action", sa.String(length=80), server_default="", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("audiences", schema=None) as batch_op:
        batch_op.drop_column("call_to_action")
        batch_op.drop_column("offer_emphasis")
