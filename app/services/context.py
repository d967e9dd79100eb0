"""The process-wide handles a use case needs: the database, the asset store and the engine."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from app.config import Settings
from app.services.files import ResponseFiles
from app.services.library import install_builtins
from app.services.throttle import SignInThrottle
from storage import AssetStore, Database, Tenant

if TYPE_CHECKING:
    from engine import Engine


@dataclass
class AppContext:
    settings: Settings
    db: Database
    assets: AssetStore
    throttle: SignInThrottle = field(default_factory=SignInThrottle)  # per process

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

    @cached_property
    def responses(self) -> ResponseFiles:
        """The web folder: uploads, and the files made for each session's responses."""
        return ResponseFiles(self.settings.resolved_web_dir)

    @contextmanager
    def tenant(self, business_id: int) -> Iterator[Tenant]:
        """One unit of work inside one business."""
        with self.db.session() as session:
            yield Tenant(session, business_id, self.assets)

    def close(self) -> None:
        self.db.dispose()


def open_engine(settings: Settings, **overrides) -> Engine:
    """The engine as the settings configure it (device, dtype, weights, segmentation model,
    batching, compilation); `overrides` for a caller that knows better, e.g. max_batch=1."""
    from engine import Engine  # torch loads only for commands that generate

    options = {
        "device": settings.device,
        "dtype": settings.dtype,
        "model_dir": settings.resolved_model_dir,
        "segmentation_model": settings.segmentation_model,
        "max_batch": settings.engine_max_batch,
        "max_queued": settings.engine_max_queued,
        "compile_blocks": settings.compile,
        "cuda_graphs": settings.cuda_graphs,
    }
    return Engine(**{**options, **overrides})
