"""Alembic, driven from code: the app and `spotforge db ...` both go through here."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine

MIGRATIONS = Path(__file__).parent / "migrations"


def _config(engine: Engine | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["engine"] = engine
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    command.upgrade(_config(engine), revision)


def downgrade(engine: Engine, revision: str) -> None:
    command.downgrade(_config(engine), revision)


def current(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head() -> str:
    return ScriptDirectory.from_config(_config()).get_current_head()


def revision(engine: Engine, message: str) -> None:
    """Write the next numbered revision from the difference between the models and `engine`'s
    database, which must be at head."""
    config = _config(engine)
    config.set_main_option("file_template", "%%(rev)s_%%(slug)s")
    number = len(list(ScriptDirectory.from_config(config).walk_revisions())) + 1
    command.revision(config, message=message, autogenerate=True, rev_id=f"{number:04d}")
