"""Acceleration: step caching (DeepCache for UNets, diffusers' caches for transformers), reuse of
deterministic intermediates across requests, and the named recipes that select them."""

from engine.acceleration.deep_cache import CacheStats, DeepCacheConfig
from engine.acceleration.recipes import RECIPES, Recipe, applied, get_recipe

__all__ = ["RECIPES", "CacheStats", "DeepCacheConfig", "Recipe", "applied", "get_recipe"]
