"""Creating and listing businesses and their campaigns."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.services.context import AppContext
from app.services.errors import UserError
from app.services.text_rules import clean
from storage import Campaign, create_business, list_businesses, rename_business


@dataclass(frozen=True)
class BusinessView:
    id: int
    name: str
    created_at: datetime


@dataclass(frozen=True)
class CampaignView:
    id: int
    name: str
    objective: str
    status: str
    created_at: datetime


def create(ctx: AppContext, name: str) -> BusinessView:
    with ctx.db.session() as session:
        business = create_business(session, name)
        return BusinessView(business.id, business.name, business.created_at)


def rename(ctx: AppContext, business_id: int, name: str) -> BusinessView:
    """The business's name as every spot made from now on shows it on its end card; a spot made
    already keeps the name it was made with, so what was approved is what airs."""
    name = clean("business_name", name)
    if not name:
        raise UserError("Give your business a name.")
    with ctx.tenant(business_id) as tenant:
        rename_business(tenant.business, name)
        business = tenant.business
        return BusinessView(business.id, business.name, business.created_at)


def list_all(ctx: AppContext) -> list[BusinessView]:
    with ctx.db.session() as session:
        return [BusinessView(b.id, b.name, b.created_at) for b in list_businesses(session)]


def create_campaign(
    ctx: AppContext, business_id: int, name: str, objective: str = ""
) -> CampaignView:
    with ctx.tenant(business_id) as tenant:
        return _campaign_view(tenant.campaigns.create(name, objective))


def list_campaigns(ctx: AppContext, business_id: int) -> list[CampaignView]:
    with ctx.tenant(business_id) as tenant:
        return [_campaign_view(c) for c in tenant.campaigns.list()]


def _campaign_view(campaign: Campaign) -> CampaignView:
    return CampaignView(
        campaign.id, campaign.name, campaign.objective, campaign.status.value, campaign.created_at
    )


def duplicate_campaign(ctx: AppContext, business_id: int, campaign_id: int) -> CampaignView:
    """A new campaign with the same spots (brief, template, photos), ready for new variants."""
    with ctx.tenant(business_id) as tenant:
        original = tenant.campaigns.get(campaign_id)
        name = f"{original.name[:110]} (copy)"
        duplicate = tenant.campaigns.create(name, original.objective)
        for spot in tenant.campaigns.spots(campaign_id):
            tenant.campaigns.create_spot(
                duplicate.id,
                template_id=spot.template_id,
                template_version=spot.template_version,
                duration_s=spot.duration_s,
                copy=dict(spot.copy),
                product_asset_ids=[a.id for a in spot.product_assets],
            )
        return _campaign_view(duplicate)


def newest_spot(ctx: AppContext, business_id: int, campaign_id: int) -> int:
    """The campaign's spot as it now stands: its newest version (a brief edited and sent again
    from the open spot adds one)."""
    with ctx.tenant(business_id) as tenant:
        found = tenant.campaigns.spots(campaign_id)
        if not found:
            raise UserError("this campaign has no spot yet; make one from a brief")
        return found[-1].id


def last_spot(ctx: AppContext, business_id: int) -> int | None:
    """Where a returning owner left off: the newest spot they made, in whichever campaign."""
    with ctx.tenant(business_id) as tenant:
        newest = tenant.campaigns.newest_spot()
        return None if newest is None else newest.id
