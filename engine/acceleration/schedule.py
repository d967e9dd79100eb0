"""Where a denoiser call sits on the sampling schedule, whether a step cache computes it in
full, and how a cached tensor is reused: shared by DeepCache (UNets) and the step cache
(transformers)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch


@dataclass
class StepClock:
    """Places each denoiser call on the pipeline scheduler's schedule. The first call found
    is step 0, so image-to-image, which starts part-way into the schedule, counts from there."""

    scheduler: object
    first_index: int | None = None
    step: int = 0
    total: int = 0
    # The schedule's timesteps from step 0 on, read once: a GPU tensor would make every read
    # wait for the GPU.
    times: list[float] = field(default_factory=list)

    def place(self, timestep) -> int:
        timesteps = self.scheduler.timesteps
        if hasattr(self.scheduler, "step_index"):
            # The scheduler's own count: pipelines pass the timestep on different scales (Flux
            # divides it by 1000), and its index is None until the first step is taken.
            index = self.scheduler.step_index
            if index is None:
                index = getattr(self.scheduler, "begin_index", None) or 0
        else:
            t = torch.as_tensor(timestep, dtype=timesteps.dtype).flatten()[0]
            index = int(torch.argmin((timesteps - t.to(timesteps.device)).abs()))
        if self.first_index is None:
            self.first_index = index
            self.times = [float(t) for t in timesteps[index:].tolist()]
        self.step = index - self.first_index
        self.total = len(timesteps) - self.first_index
        return self.step

    def since_full(self, interval: int, warmup_steps: int) -> int:
        """Steps since the last full one on a uniform schedule after the warm-up (0: full)."""
        return (self.step - warmup_steps) % interval

    def is_full(self, interval: int, warmup_steps: int, final_steps: int) -> bool:
        in_edges = self.step < warmup_steps or self.step >= self.total - final_steps
        return in_edges or not self.since_full(interval, warmup_steps)


def extrapolate(
    points: list[tuple[float, torch.Tensor]],
    at: float,
    rows: int,
    damping: float = 1.0,
    most: float = math.inf,
) -> torch.Tensor:
    """First-order Taylor step from the last two (position, value) points (a step's index or
    its timestep) to `at`, their ratio of distances capped at `most` and then scaled by
    `damping`; at two equal positions (a second-order scheduler repeats its timesteps), the
    last value."""
    (s0, f0), (s1, f1) = ((s, last_rows(f, rows)) for s, f in points)
    if s1 == s0:
        return f1
    return f1 + (f1 - f0) * (damping * min((at - s1) / (s1 - s0), most))


def last_rows(value, rows: int):
    """A cached block output cut to this call's batch. When guidance stops, the unconditional
    rows (the first half) go and the conditional ones remain, so the last rows are kept."""
    if isinstance(value, torch.Tensor):
        return value if value.shape[0] == rows else value[-rows:]
    if isinstance(value, tuple):
        return tuple(last_rows(v, rows) for v in value)
    return value
