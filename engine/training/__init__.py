"""Training Spotforge's own small diffusion model (`mini-sd`) on procedural scenes."""
