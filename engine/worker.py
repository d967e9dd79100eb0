"""The one thread that owns the device: takes batches from the scheduler and runs them."""

from __future__ import annotations

import logging
import threading

from engine.errors import Cancelled, EngineError
from engine.handle import Handle
from engine.pool import ModelPool
from engine.prompts import fit_prompts
from engine.runner import run_batch
from engine.scheduler import Scheduler

log = logging.getLogger(__name__)


class Worker(threading.Thread):
    def __init__(self, scheduler: Scheduler, pool: ModelPool):
        super().__init__(name="spotforge-engine", daemon=True)
        self._scheduler = scheduler
        self._pool = pool

    def run(self) -> None:
        while (batch := self._scheduler.next_batch()) is not None:
            try:
                self._run(batch)
            except Exception as exc:  # the worker must outlive any one batch
                log.exception("batch of %d failed", len(batch))
                for handle in batch:
                    handle.fail(_as_engine_error(exc))

    def _run(self, batch: list[Handle]) -> None:
        live = []
        for handle in batch:
            if handle.cancelled:
                handle.fail(Cancelled(f"request {handle.id} was cancelled"))
            else:
                live.append(handle)
        if not live:
            return
        preset_id = live[0].request.preset
        try:
            model = self._pool.get(preset_id)
            pipe = model.pipeline(live[0].request.task)
        except Exception as exc:  # one failure message for every request that needed the model
            for handle in live:
                handle.fail(_as_engine_error(exc))
            return
        runnable = []
        for handle in live:
            try:
                handle.resolved = fit_prompts(pipe, preset_id, handle.resolved)
                runnable.append(handle)
            except Exception as exc:
                handle.fail(_as_engine_error(exc))
        if not runnable:
            return
        for handle in runnable:
            for warning in handle.resolved.warnings:
                handle.emit("warning", message=warning)
            handle.emit("started")

        def on_step(step: int, total: int) -> None:
            for handle in runnable:
                handle.emit("step", step, total)

        try:
            results = run_batch(
                model,
                [h.resolved for h in runnable],
                on_step,
                cancelled=lambda: all(h.cancelled for h in runnable),
            )
        except Cancelled as exc:
            for handle in runnable:
                handle.fail(exc)
            return
        except Exception as exc:
            log.exception("batch of %d failed", len(runnable))
            for handle in runnable:
                handle.fail(_as_engine_error(exc))
            return
        for handle, result in zip(runnable, results, strict=True):
            if handle.cancelled:  # cancelled while others in its batch carried on
                handle.fail(Cancelled(f"request {handle.id} was cancelled"))
            else:
                handle.succeed(result)


def _as_engine_error(exc: Exception) -> EngineError:
    """Callers get EngineErrors only; anything else (out of memory, a library bug) is wrapped
    with its message so it reaches the user instead of a traceback."""
    if isinstance(exc, EngineError):
        return exc
    error = EngineError(f"generation failed: {type(exc).__name__}: {exc}")
    error.__cause__ = exc
    return error
