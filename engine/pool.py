"""Models kept resident under a memory budget, least recently used evicted first.

An evicted model is first offloaded to CPU memory (when it runs on an accelerator and the CPU
budget allows), so taking it back costs a copy rather than a load; otherwise it is dropped.
Only the engine's worker thread calls the pool.
"""

from __future__ import annotations

import gc
from collections import OrderedDict
from collections.abc import Callable

import torch

from engine.errors import ModelUnavailable
from engine.loading import LoadedModel

CPU = torch.device("cpu")


class ModelPool:
    def __init__(
        self,
        load: Callable[[str], LoadedModel],  # loads onto the CPU
        device: torch.device,
        budget_bytes: int,
        cpu_budget_bytes: int = 0,
    ):
        self._load = load
        self.device = device
        self.budget_bytes = budget_bytes
        self.cpu_budget_bytes = cpu_budget_bytes
        self._resident: OrderedDict[str, LoadedModel] = OrderedDict()  # oldest use first
        self._offloaded: OrderedDict[str, LoadedModel] = OrderedDict()
        self.loads = 0  # how many times a model was loaded from scratch

    def get(self, preset_id: str) -> LoadedModel:
        if preset_id in self._resident:
            self._resident.move_to_end(preset_id)
            return self._resident[preset_id]
        model = self._offloaded.pop(preset_id, None)
        if model is None:
            model = self._load(preset_id)
            self.loads += 1
        if model.nbytes > self.budget_bytes:
            raise ModelUnavailable(
                f"{preset_id} needs {model.nbytes / 2**30:.1f} GiB, more than the engine's "
                f"memory budget of {self.budget_bytes / 2**30:.1f} GiB"
            )
        self._make_room(model.nbytes)
        if model.device != self.device:
            model.to(self.device)
        self._resident[preset_id] = model
        return model

    @property
    def resident(self) -> list[str]:
        return list(self._resident)

    @property
    def offloaded(self) -> list[str]:
        return list(self._offloaded)

    def _make_room(self, needed: int) -> None:
        while self._resident and _total(self._resident) + needed > self.budget_bytes:
            victim_id, victim = self._resident.popitem(last=False)
            if self.device != CPU and victim.nbytes <= self.cpu_budget_bytes:
                while self._offloaded and (
                    _total(self._offloaded) + victim.nbytes > self.cpu_budget_bytes
                ):
                    self._offloaded.popitem(last=False)
                victim.to(CPU)
                self._offloaded[victim_id] = victim
            del victim
            gc.collect()
            if self.device.type == "cuda":
                torch.cuda.empty_cache()


def _total(models: OrderedDict[str, LoadedModel]) -> int:
    return sum(m.nbytes for m in models.values())
