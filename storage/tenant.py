"""`Tenant`: the storage API for one business. Nothing in it can reach another business's rows.

with db.session() as session:
    tenant = Tenant(session, business_id, asset_store)
    campaign = tenant.campaigns.create("Spring sale")
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from storage.assets import AssetStore
from storage.errors import NotFound
from storage.models import Business
from storage.repos.answers import Answers
from storage.repos.assets import Assets
from storage.repos.brand_kits import BrandKits
from storage.repos.campaigns import Campaigns
from storage.repos.generations import Generations
from storage.repos.library import Library
from storage.repos.orders import Orders
from storage.repos.variants import Variants
from storage.scope import Scope


class Tenant:
    def __init__(self, session: Session, business_id: int, assets: AssetStore):
        business = session.get(Business, business_id)
        if business is None:
            raise NotFound("business", business_id)
        self.business = business
        scope = Scope(session, business.id)
        self.campaigns = Campaigns(scope)
        self.library = Library(scope)
        self.assets = Assets(scope, assets)
        self.variants = Variants(scope)
        self.orders = Orders(scope)
        self.generations = Generations(scope)
        self.answers = Answers(scope)
        self.brand_kit = BrandKits(scope)
