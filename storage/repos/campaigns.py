"""Campaigns and their spots (a spot's scenes come from its template and brief; see
`storage.models`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from storage.errors import InvalidValue
from storage.models import Asset, Campaign, CampaignStatus, Spot
from storage.scope import Scope

SPOT_DURATIONS = (15.0, 30.0)  # CTV masters are exactly 15 or 30 s


class Campaigns:
    def __init__(self, scope: Scope):
        self._scope = scope

    def create(self, name: str, objective: str = "") -> Campaign:
        name = name.strip()
        if not name:
            raise InvalidValue("a campaign needs a name")
        if len(name) > 120:
            raise InvalidValue("a campaign name has at most 120 characters")
        return self._scope.add(Campaign(name=name, objective=_objective(objective)))

    def set_objective(self, campaign_id: int, objective: str) -> Campaign:
        campaign = self.get(campaign_id)
        campaign.objective = _objective(objective)
        return campaign

    def list(self) -> list[Campaign]:
        return self._scope.all(
            self._scope.select(Campaign).order_by(Campaign.created_at.desc(), Campaign.id.desc())
        )

    def get(self, campaign_id: int) -> Campaign:
        return self._scope.get(Campaign, campaign_id)

    def set_status(self, campaign_id: int, status: CampaignStatus | str) -> Campaign:
        campaign = self.get(campaign_id)
        campaign.status = CampaignStatus(status)
        return campaign

    def create_spot(
        self,
        campaign_id: int,
        *,
        template_id: str,
        template_version: str,
        duration_s: float,
        copy: dict[str, Any] | None = None,
        product_asset_ids: Sequence[int] = (),
    ) -> Spot:
        if duration_s not in SPOT_DURATIONS:
            raise InvalidValue(f"a spot lasts 15 or 30 seconds, not {duration_s}")
        campaign = self.get(campaign_id)
        products = [self._scope.get(Asset, asset_id) for asset_id in product_asset_ids]
        return self._scope.add(
            Spot(
                campaign_id=campaign.id,
                template_id=template_id,
                template_version=template_version,
                duration_s=duration_s,
                copy=dict(copy or {}),
                product_assets=products,
            )
        )

    def spot(self, spot_id: int) -> Spot:
        return self._scope.get(Spot, spot_id)

    def newest_spot(self) -> Spot | None:
        """The business's newest spot, in whichever campaign."""
        return next(
            iter(self._scope.all(self._scope.select(Spot).order_by(Spot.id.desc()).limit(1))), None
        )

    def spots(self, campaign_id: int) -> list[Spot]:
        self.get(campaign_id)
        return self._scope.all(
            self._scope.select(Spot).where(Spot.campaign_id == campaign_id).order_by(Spot.id)
        )


def _objective(objective: str) -> str:
    objective = objective.strip()
    if len(objective) > 500:
        raise InvalidValue("an objective has at most 500 characters")
    return objective
