"""A variant's words edited by its owner, as lineage: the edit is a child of the variant (role
"edit"), in the same place, for the same audience, on the same background, with only its copy
changed; the app's workers make its frame as they make a run's.

Every line the spot shows may be edited here, the call to action, web address, phone and
product name included: they are the owner's own words and the owner is the one typing. The
business's name is its account's, as in the brief.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from app.services import bulk, spots
from app.services.errors import UserError
from app.services.jobs import ensure_room
from app.services.text_rules import FIELDS, clean_all
from storage import GenerationParams
from templates.spec import load_template
from templates.storyboard import ON_SCREEN

if TYPE_CHECKING:
    from app.services.context import AppContext

EDIT_ROLE = "edit"
EDITABLE = ON_SCREEN


def words(ctx: AppContext, business_id: int, variant_id: int) -> dict[str, str]:
    """The variant's words on screen, by field (EDITABLE)."""
    with ctx.tenant(business_id) as tenant:
        copy = tenant.variants.get(variant_id).extra_params["copy"]
    return {field: copy.get(field, "") for field in EDITABLE}


def edit_copy(
    ctx: AppContext, business_id: int, variant_id: int, changes: dict[str, str | None]
) -> int:
    """A child of the variant with these words (field -> text) in the place of its own, checked
    as the brief's were, and its frame job queued; returns the child's id. The same edit asked
    again (a script retrying) returns the child it made."""
    unknown = sorted(map(str, set(changes) - set(EDITABLE)))
    if unknown or not changes:
        shown = ", ".join(FIELDS[field][0] for field in EDITABLE)
        raise UserError(f"Choose which words to change: the {shown}.")
    with ctx.tenant(business_id) as tenant:
        parent = tenant.variants.get(variant_id)
        params = GenerationParams.of(parent)
        brief = spots.brief_of({**params.extra["copy"], **clean_all(changes)})
        copy = brief.model_dump(mode="json")
        if copy == params.extra["copy"]:
            raise UserError("These are the variant's words already: change one to edit it.")
        template = load_template(tenant.campaigns.spot(parent.spot_id).template_id)
        spots.check_copy(tenant, template, brief, params.extra)
        made = [
            v.id for v in tenant.variants.descendants(parent.id)
            if v.parent_id == parent.id and v.role == EDIT_ROLE and v.extra_params["copy"] == copy
        ]  # fmt: skip
        if made:
            return made[0]
    ensure_room(ctx, business_id, 1)
    params = replace(params, extra={**params.extra, "role": EDIT_ROLE, "run": None, "copy": copy})
    return bulk.make_child(ctx, business_id, parent, params)
