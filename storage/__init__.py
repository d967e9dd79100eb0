"""Persistence: SQLAlchemy models, migrations, the content-addressed asset store and job tables.

Campaign data is read only through a `Tenant` (see `storage.tenant`), which scopes every
query to one business. Storage never imports torch or any other Spotforge package.
"""

from storage import accounts
from storage.assets import AssetStore
from storage.businesses import create_business, list_businesses, rename_business
from storage.database import Database
from storage.errors import (
    AssetTooLarge,
    InvalidAsset,
    InvalidTransition,
    InvalidValue,
    NotFound,
    StorageError,
)
from storage.jobs import HEARTBEAT_S, LEASE_S, JobKey, JobQueue, LeaseLost
from storage.models import (
    Audience,
    Business,
    Campaign,
    CampaignStatus,
    Geography,
    Job,
    JobStatus,
    OrderStatus,
    Render,
    RenderTier,
    Spot,
    User,
    Variant,
    VariantStatus,
)
from storage.repos.library import install_shared
from storage.repos.orders import rendering
from storage.repos.variants import GenerationParams
from storage.tenant import Tenant

# What the rest of Spotforge may use (an import-linter contract holds app.services to it).
__all__ = [
    "HEARTBEAT_S",
    "LEASE_S",
    "AssetStore",
    "AssetTooLarge",
    "Audience",
    "Business",
    "Campaign",
    "CampaignStatus",
    "Database",
    "GenerationParams",
    "Geography",
    "InvalidAsset",
    "InvalidTransition",
    "InvalidValue",
    "Job",
    "JobKey",
    "JobQueue",
    "JobStatus",
    "LeaseLost",
    "NotFound",
    "OrderStatus",
    "Render",
    "RenderTier",
    "Spot",
    "StorageError",
    "Tenant",
    "User",
    "Variant",
    "VariantStatus",
    "accounts",
    "create_business",
    "install_shared",
    "list_businesses",
    "rename_business",
    "rendering",
]
