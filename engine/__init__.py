"""In-process diffusion engine: models, requests, scheduler, acceleration recipes.

It knows images, videos, prompts and seeds; it never knows a campaign.
"""
