"""Persistence: SQLAlchemy models, migrations, the content-addressed asset store and job tables.

Campaign data is read only through a `Tenant` (see `storage.tenant`), which scopes every
query to one business. Storage never imports torch or any other Spotforge package.
"""

from storage.assets import AssetStore
from storage.database import Database
from storage.errors import (
    AssetTooLarge,
    InvalidAsset,
    InvalidTransition,
    InvalidValue,
    NotFound,
    StorageError,
)
from storage.tenant import Tenant

__all__ = [
    "AssetStore",
    "AssetTooLarge",
    "Database",
    "InvalidAsset",
    "InvalidTransition",
    "InvalidValue",
    "NotFound",
    "StorageError",
    "Tenant",
]
