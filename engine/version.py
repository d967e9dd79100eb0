"""Recorded in every result, so a variant says which engine made it."""

# Bumped whenever a recipe's numerics change, so that results cached under the old ones (keyed
# by it) are made again. 0.2.0: transformer recipes became the step cache. 0.3.0: its full
# steps placed by a power law ending before the schedule's end, and late cached steps forecast.
# 0.4.0: a final drawn from a layout takes its fine detail from the layout (engine.layout_detail).
# 0.4.1: where they agree, that final is the layout in the model's light (no halos at edges).
# 0.4.2: finals drawn in one batch each take their own layout's detail (each took the
# batch's first: Manhattan showed the Bay Area's houses through its towers).
# 0.4.3: layouts at 1080p draw towers' floors, brick courses, snow's drifts and golden hour's
# raking light (engine.training.landmarks), so finals drawn from them carry those.
# 0.4.4: at 1080p an overcast sky is a deck of cloud cells in perspective, not a smooth grey;
# landmarks show their make (the Space Needle's lattice, the obelisk's faces, the Capitol's
# columns...); a field meets the land behind it in blades, not a ruled line; beach sand is
# textured down to the frame's bottom.
# 0.4.5: at 1080p broadleaf crowns are clumps of leaves lit from the sun, conifers tiers of
# boughs, palms fronds of leaflets, birches marked; water mirrors what stands beyond it; a
# cliff shows rock and gullies, a bayou ripples and banks, a deco hotel ledges and fins.
# 0.4.6: at 1080p a rocky crest has crags and its snow tongues down the gullies (no ruled snow
# line), a street has paving slabs, gritty asphalt and sealed cracks, Anchorage's near shore is
# rock, and a crown at night is lit from above (it was a flat disc).
# 0.4.7: a clear sky's sun or moon in a final is its layout's, whole (the model's blob of it
# showed a bite of the sky's blue at one side).
# 0.4.8: the model's picture agrees with its layout where it matches it as either size draws
# it (a far town's lit windows, drawn at 1080p only, were taken for disagreement and dropped).
# 0.4.9: at 1080p a brick row house's windows are sashes, a snowfield shows rock ribs, and
# grass, water, rock and canopy show more relief near the camera (grass in slender blades).
# 0.4.10: at 1080p a night's towns lie where the land meets its floor (valley, shore, plain),
# along streets, thinning up the slopes and towards the camera, from a random stream of their own.
# 0.4.11: at 1080p Broadway's signs carry their words and bulbs, a near sward's blades stand
# wider and in deeper shade, and wooded valleys and a range's foot hold twice the towns.
ENGINE_VERSION = "0.4.11"
