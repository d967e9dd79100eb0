"""Alembic environment: runs against the engine handed over by storage.migrate."""

from alembic import context

from storage.models import Base, UTCDateTime


def render_item(kind, obj, autogen_context):
    # Revisions must not import the live models, which change after the revision is written.
    if kind == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


engine = context.config.attributes["engine"]

with engine.begin() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=True,  # SQLite alters tables by copying them
        compare_type=True,
        render_item=render_item,
    )
    with context.begin_transaction():
        context.run_migrations()
