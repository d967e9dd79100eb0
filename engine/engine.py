"""`Engine`: the one entry point. Submit requests from any thread; one worker owns the device.

with Engine() as engine:
    handle = engine.submit(TextToImage(preset="tiny-sd", prompt="a red shoe", seed=7))
    for event in handle.events():
        ...
    image = handle.result().images[0]
"""

from __future__ import annotations

import os
import threading
from functools import partial
from pathlib import Path

import torch

from engine.device import pick_device
from engine.errors import Cancelled, EngineError, QueueFull
from engine.handle import Handle
from engine.loading import LoadedModel, load, model_revision, preset_for, prompt_tokenizers
from engine.pool import CPU, ModelPool
from engine.prompts import closed_vocabulary, words_of
from engine.reference import first_frame
from engine.requests import Request
from engine.runner import Result, resolve
from engine.scheduler import Scheduler
from engine.segmentation import Segmenter
from engine.worker import Worker


class Engine:
    def __init__(
        self,
        *,
        device: str | None = None,
        dtype: str | None = None,
        model_dir: Path = Path("var/models"),
        max_queued: int = 64,
        max_batch: int = 4,
        aging_s: float = 30.0,
        memory_budget_bytes: int | None = None,
        segmentation_model: Path | None = None,
        compile_blocks: bool = False,
        cuda_graphs: bool = False,
        shifted_patches: bool = True,  # False: every preset sampled plainly (the bench's peers)
    ):
        self.device = pick_device(device)
        self.model_dir = Path(model_dir)
        self._shifted_patches = shifted_patches
        self._segmentation_model = segmentation_model
        self._segmenter: Segmenter | None = None
        self._segmenter_lock = threading.Lock()
        self.scheduler = Scheduler(max_queued, max_batch, aging_s)
        # Loaded on the CPU; the pool moves a model to the device once it has made room.
        loader = partial(
            _load_shared,
            model_dir=self.model_dir,
            device=self.device,
            dtype=dtype,
            compile_blocks=compile_blocks,
            cuda_graphs=cuda_graphs,
            shifted_patches=shifted_patches,
        )
        self.pool = ModelPool(
            loader,
            self.device,
            memory_budget_bytes or _default_budget(self.device),
            cpu_budget_bytes=_ram_bytes() // 2 if self.device != CPU else 0,
        )
        self._worker = Worker(self.scheduler, self.pool)
        self._worker.start()

    def submit(self, request: Request) -> Handle:
        """Queue a request; invalid requests and a full queue raise here, at once."""
        return self.submit_all([request])[0]

    def submit_all(self, requests: list[Request]) -> list[Handle]:
        """Queue requests together, so compatible ones run as one batch (up to `max_batch`);
        any invalid request, or a queue without room for all, refuses all of them, at once."""
        if not self._worker.is_alive():
            raise EngineError("the engine has stopped; create a new one")
        handles = []
        for request in requests:
            handle = Handle(resolve(request, preset_for(request.preset), self._compose))
            handle._on_cancel = self._dequeue
            handles.append(handle)
        for handle in handles:
            handle.emit("queued")  # before the worker can see it, so events stay in order
        self.scheduler.submit_all(handles)
        return handles

    def generate(self, request: Request, timeout: float | None = None) -> Result:
        return self.submit(request).result(timeout)

    @property
    def max_batch(self) -> int:
        """The most compatible requests it runs as one batch: what a caller should hand it."""
        return self.scheduler.max_batch

    def revision(self, preset_id: str) -> str:
        """The model revision a request for this preset will report, known before it runs."""
        return model_revision(preset_id, self.model_dir, self._shifted_patches)

    def read_words(self, preset_id: str, text: str) -> tuple[list[str], list[str]]:
        """The words of `text` this preset's model knows and those it does not (in order,
        once each): what a prompt with them keeps and loses, as the engine will warn when it
        runs. A model that reads any text keeps the text whole."""
        kept, lost = [], []
        for tokenizer in prompt_tokenizers(preset_id, self.model_dir):
            vocab = closed_vocabulary(tokenizer)
            if vocab is not None:
                for word in words_of(tokenizer, text):
                    (kept if word in vocab else lost).append(word)
        return list(dict.fromkeys(kept)), list(dict.fromkeys(lost))

    @property
    def segmenter(self) -> Segmenter:
        with self._segmenter_lock:  # submit() may be called from many threads at once
            if self._segmenter is None:
                self._segmenter = Segmenter(self._segmentation_model)
            return self._segmenter

    def close(self) -> None:
        for handle in self.scheduler.close():
            handle.fail(Cancelled("the engine shut down before this request ran"))
        self._worker.join()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _dequeue(self, handle: Handle) -> None:
        if self.scheduler.remove(handle):
            handle.fail(Cancelled(f"request {handle.id} was cancelled"))

    def _compose(self, request, width: int, height: int):
        return first_frame(request, self.segmenter, width, height)


def _load_shared(
    preset_id: str, compile_blocks: bool = False, cuda_graphs: bool = False, **kwargs
) -> LoadedModel:
    model = load(preset_id, stay_on_cpu=True, **kwargs)
    model.share_encodings()
    if compile_blocks:
        model.compile_blocks()
    if cuda_graphs:
        model.use_cuda_graphs()
    return model


def _ram_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _default_budget(device: torch.device) -> int:
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).total_memory * 0.85)
    return _ram_bytes() // 2


__all__ = ["Engine", "QueueFull"]
