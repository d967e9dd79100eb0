"""render worker

Which worker made each render (its lease owner), so a bulk run reports how its work was shared
among the workers of a pool, counted from the rows rather than from processes that may have died.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 11:40:00.000000

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision: str = '0007'
down_revision: Union[str, Sequence[str], None] = '0006'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('renders', schema=None) as batch_op:
        batch_op.add_column(sa.Column('worker', sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('renders', schema=None) as batch_op:
        batch_op.drop_column('worker')
