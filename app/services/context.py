"""The process-wide handles a use case needs: the database and the asset store."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from app.config import Settings
from app.services.library import install_builtins
from storage import AssetStore, Database, Tenant


@dataclass
class AppContext:
    settings: Settings
    db: Database
    assets: AssetStore

    @classmethod
    def open(cls, settings: Settings | None = None) -> AppContext:
        """Connect, bring the schema and the built-in library up to date, and open the asset
        store."""
        settings = settings or Settings()
        db = Database(settings.resolved_database_url)
        db.upgrade()
        install_builtins(db)
        store = AssetStore(settings.resolved_asset_dir, settings.max_asset_bytes)
        return cls(settings, db, store)

    @contextmanager
    def tenant(self, business_id: int) -> Iterator[Tenant]:
        """One unit of work inside one business."""
        with self.db.session() as session:
            yield Tenant(session, business_id, self.assets)

    def close(self) -> None:
        self.db.dispose()
