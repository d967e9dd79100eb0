"""A look at a place's background as a final shows it, before any overlay: the request a
variant in that place and light asks of the model (the same resolver, seed and cache), then the
same fitting to the frame the final applies. It stays true whatever model is the default."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from PIL import Image

from app.services import library, pictures
from app.services.backgrounds import background, background_request
from app.services.errors import UserError
from templates.composite import fitted_background

if TYPE_CHECKING:
    from app.services.context import AppContext
    from engine import Engine

FINAL_SIZE = (1920, 1080)
NO_BUSINESS = 0  # seeds a look that no business's variants share (business ids start at 1)


def scene(
    ctx: AppContext,
    engine: Engine,
    geography: str,
    *,
    preset: str,
    light: str = "day",
    seed: int = 0,
    business_id: int | None = None,
    recipe: str = "balanced",
) -> Image.Image:
    """The background of `geography` in `light` at a run's `seed`, fitted to 1920x1080: with
    `business_id`, the picture that business's variants get (its own picture of the place if it
    set one, else the one generated into its library); without, a look at the built-in place
    that no business shares."""
    if light not in library.TIMES_OF_DAY:
        raise UserError(f"light must be one of {', '.join(library.TIMES_OF_DAY)}, not {light!r}")
    if business_id is None:
        places, people = library.builtin_views()
    else:
        places, people = library.geographies(ctx, business_id), library.audiences(ctx, business_id)
    place = _named(places, geography)
    # The background depends on the audience's light only: any audience in it asks the same.
    audience = next(a for a in people if a.time_of_day == light)
    if business_id is not None and place.background is not None:  # set in its own picture
        with ctx.tenant(business_id) as tenant:
            return pictures.key_frame(tenant, place.background, light=light, size=FINAL_SIZE)
    owner = NO_BUSINESS if business_id is None else business_id
    request = background_request(
        place, audience, business_id=owner, preset=preset, seed=seed, recipe=recipe
    )
    if business_id is None:
        image = engine.generate(request).images[0]
    else:
        made = background(ctx, engine, business_id, request)
        with ctx.tenant(business_id) as tenant:
            image = Image.open(tenant.assets.path(made.asset_id))
            image.load()
    return fitted_background(image.convert("RGB"), FINAL_SIZE)


def _named(places: list[library.GeographyView], name: str) -> library.GeographyView:
    wanted = name.strip().casefold()
    for place in places:
        if place.name.casefold() == wanted:
            return place
    names = [p.name for p in places]
    folded = {n.casefold(): n for n in names}
    close = [folded[n] for n in difflib.get_close_matches(wanted, folded, n=5, cutoff=0.5)]
    close += [n for n in names if wanted and wanted.split()[0] in n.casefold()]
    close = list(dict.fromkeys(close)) or names[:5]
    raise UserError(f"no geography named {name!r}; try one of: {', '.join(close)}")
