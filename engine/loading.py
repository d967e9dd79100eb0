"""Loading pipelines: the bundled mini-sd from engine/weights, tiny presets built in-process,
hub presets from their pulled local copy, and a directory holding a saved diffusers pipeline as
it is. All but the built ones take the same `from_pretrained` path.

Only safetensors are read (never pickle) and no remote code runs. Pulling records the commit
that was fetched; that commit is the revision every result made with the model reports.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import diffusers
import torch
from diffusers import DiffusionPipeline

from engine.acceleration.reuse import EncoderCache, attach_encoder_cache
from engine.acceleration.step_cache import blocks_of
from engine.device import pick_dtype
from engine.errors import ModelUnavailable
from engine.offline import BUILDERS
from engine.presets import PIPELINES, PRESETS, Preset, get_preset
from engine.requests import Request, Task
from engine.upscaling import SceneUpscaler, load_upscaler

OFFLINE_REVISION = "offline-1"  # bump when an offline builder changes its weights
REVISION_FILE = "spotforge-revision.txt"
BUNDLED_DIR = Path(__file__).parent / "weights"
TEXT_ENCODERS = ("text_encoder", "text_encoder_2", "text_encoder_3")

# Pipeline class in a saved model_index.json -> our model family.
FAMILY_OF_CLASS = {cls: family for family, tasks in PIPELINES.items() for cls in tasks.values()}


@dataclass
class LoadedModel:
    """One model's components on one device, with a pipeline per task sharing them."""

    preset: Preset
    revision: str
    base: DiffusionPipeline
    device: torch.device
    dtype: torch.dtype
    _pipelines: dict[Task, DiffusionPipeline] = field(default_factory=dict)
    encoder_caches: dict[str, EncoderCache] = field(default_factory=dict)
    cuda_graphs: bool = False  # the denoiser replays CUDA graphs (`use_cuda_graphs`)
    shifted_patches: bool = False  # each call drawn with shifted patches (`engine.patch_shift`)
    upscaler: SceneUpscaler | None = None  # the preset's learned upscaler, where it has one

    def share_encodings(self) -> None:
        """Encode each token sequence once for every request and task of this model."""
        for name in TEXT_ENCODERS:
            if isinstance(encoder := getattr(self.base, name, None), torch.nn.Module):
                self.encoder_caches[name] = attach_encoder_cache(encoder)

    @property
    def denoiser(self) -> torch.nn.Module:
        unet = getattr(self.base, "unet", None)
        return unet if unet is not None else self.base.transformer

    def compile_blocks(self) -> None:
        """Regional torch.compile of the denoiser (`compile_regions`)."""
        compile_regions(self.denoiser)

    def use_cuda_graphs(self) -> None:
        """Denoiser calls on a GPU replayed from CUDA graphs (`acceleration.cuda_graphs`)."""
        from engine.acceleration.cuda_graphs import use_cuda_graphs  # Triton: only when asked

        use_cuda_graphs(self.denoiser)
        self.cuda_graphs = True

    def forget_encodings(self) -> None:
        for cache in self.encoder_caches.values():
            cache.rows.clear()

    def pipeline(self, task: Task) -> DiffusionPipeline:
        if task not in self._pipelines:
            cls = getattr(diffusers, self.preset.pipeline_class(task))
            # from_pipe shares the modules: a second task costs no memory. It casts them to the
            # dtype it is given (float32 if none) and warns about casting; both are no-ops here.
            with _quiet_diffusers():
                pipe = (
                    self.base
                    if isinstance(self.base, cls)
                    else cls.from_pipe(self.base, dtype=self.dtype)
                )
            pipe.set_progress_bar_config(disable=True)
            self._pipelines[task] = pipe
        return self._pipelines[task]

    @property
    def modules(self) -> list[torch.nn.Module]:
        parts = [m for m in self.base.components.values() if isinstance(m, torch.nn.Module)]
        return parts + ([self.upscaler] if self.upscaler is not None else [])

    @property
    def nbytes(self) -> int:
        return sum(
            t.numel() * t.element_size()
            for module in self.modules
            for t in (*module.parameters(), *module.buffers())
        )

    def to(self, device: torch.device) -> None:
        if self.cuda_graphs:  # they hold the weights' old addresses, and GPU memory
            from engine.acceleration.cuda_graphs import drop_graphs

            drop_graphs(self.denoiser)
        self.base.to(device)
        if self.upscaler is not None:
            self.upscaler.to(device)
        self.device = device


def compile_regions(denoiser: torch.nn.Module) -> None:
    """Regional torch.compile: the denoiser's repeated blocks (diffusers' `_repeated_blocks`,
    e.g. a UNet's transformer blocks, Flux's double and single blocks), each class compiled
    once for all its instances, in seconds rather than a whole model's minutes. Their inputs
    keep one shape from step to step, so steps trigger no recompiles; a new batch size (as
    when guidance stops), resolution or the padded shape of shifted patches compiles once
    more. Not `fullgraph`: the caches' hooks on these blocks call code that torch.compile must
    leave out of the graph. A model that names no repeated blocks (SD3) has each of its
    transformer blocks compiled."""
    if denoiser._repeated_blocks:
        denoiser.compile_repeated_blocks()
    else:
        for block in blocks_of(denoiser):
            block.compile()


def preset_for(preset_id: str) -> Preset:
    """The preset for an id, or for a directory holding a saved pipeline."""
    path = Path(preset_id)
    if (path / "model_index.json").is_file():
        return _directory_preset(path)
    return get_preset(preset_id)


def with_defaults(request: Request, preset: Preset | None = None) -> Request:
    """The request with every default its preset fills written out: steps, guidance, size,
    and a clip's frames and rate. The one resolver of defaults: what the engine runs, what a
    cache key hashes and what a variant's lineage records all come from it."""
    preset = preset or preset_for(request.preset)
    filled: dict = {
        "steps": request.steps or preset.steps,
        "guidance": preset.guidance if request.guidance is None else request.guidance,
        "width": request.width or preset.width,
        "height": request.height or preset.height,
    }
    if request.task.is_video:
        filled |= {"num_frames": request.num_frames or preset.num_frames,
                   "fps": request.fps or preset.fps}  # fmt: skip
    return replace(request, **filled)


def load(
    preset_id: str,
    model_dir: Path,
    device: torch.device,
    dtype: str | None = None,
    *,
    stay_on_cpu: bool = False,
    shifted_patches: bool = True,
) -> LoadedModel:
    """Load a preset id, or a directory with a saved pipeline, in the dtype meant for `device`;
    onto `device`, or left on the CPU for the caller to move (`stay_on_cpu`). A preset drawn
    with shifted patches is, unless `shifted_patches` is False (plain diffusers' sampling, as
    the bench compares peers on)."""
    preset = preset_for(preset_id)
    shifted = shifted_patches and preset.shifted_patches
    source, weights = _source(preset, model_dir)
    revision = _result_revision(weights, shifted)
    torch_dtype = pick_dtype(preset.dtypes, device, dtype)
    if source is None:
        base = BUILDERS[preset.id]()
        if torch_dtype != torch.float32:
            with _quiet_diffusers():
                base.to(dtype=torch_dtype)
    else:
        try:
            base = DiffusionPipeline.from_pretrained(
                source, dtype=torch_dtype, use_safetensors=True, local_files_only=True,
                **_absent_components(source),
            )  # fmt: skip
        except (OSError, ValueError) as exc:
            raise ModelUnavailable(f"cannot load {preset.id} from {source}: {exc}") from exc
    upscaler = load_upscaler(source, torch_dtype) if preset.upscale_to and source else None
    placed = torch.device("cpu") if stay_on_cpu else device
    model = LoadedModel(preset, revision, base, placed, torch_dtype, shifted_patches=shifted,
                        upscaler=upscaler)  # fmt: skip
    model.to(placed)
    base.set_progress_bar_config(disable=True)
    return model


def _absent_components(source: Path) -> dict[str, None]:
    """Components the saved pipeline stores as absent, passed as absent: from_pretrained
    refuses a missing one the pipeline class does not list as optional (SD3 without T5)."""
    index = json.loads((source / "model_index.json").read_text())
    return {name: None for name, value in index.items() if value == [None, None]}


def pull(preset_id: str, model_dir: Path) -> Path:
    """Download a hub preset's safetensors and configs, and record the commit fetched."""
    from huggingface_hub import HfApi, snapshot_download

    preset = get_preset(preset_id)
    if preset.offline:
        raise ModelUnavailable(f"{preset.id} ships with Spotforge; there is nothing to pull")
    commit = HfApi().model_info(preset.repo, revision=preset.revision).sha
    target = model_dir / preset.id
    snapshot_download(
        preset.repo,
        revision=commit,
        local_dir=target,
        allow_patterns=["*.json", "*.safetensors", "*.txt", "*.model"],
    )
    (target / REVISION_FILE).write_text(commit + "\n")
    return target


def local_size(preset: Preset, model_dir: Path) -> int | None:
    """Bytes on disk for a pulled preset; None when it is not here (offline presets: 0)."""
    if preset.offline:
        return 0
    root = model_dir / preset.id
    if not (root / "model_index.json").is_file():
        return None
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file())


@contextmanager
def _quiet_diffusers() -> Iterator[None]:
    level = diffusers.utils.logging.get_verbosity()
    diffusers.utils.logging.set_verbosity_error()
    try:
        yield
    finally:
        diffusers.utils.logging.set_verbosity(level)


def prompt_tokenizers(preset_id: str, model_dir: Path) -> tuple:
    """The tokenizers a preset's pipeline reads prompts with, without loading its weights;
    none for a preset built in-process (its byte tokenizers read any text)."""
    source, revision = _source(preset_for(preset_id), model_dir)
    return () if source is None else _tokenizers(source, revision)


@functools.cache  # per weights revision: a retrained model may know other words
def _tokenizers(source: Path, revision: str) -> tuple:
    from transformers import AutoTokenizer

    names = [n for n in ("tokenizer", "tokenizer_2") if (source / n).is_dir()]
    return tuple(AutoTokenizer.from_pretrained(source / n, local_files_only=True) for n in names)


def model_revision(preset_id: str, model_dir: Path, shifted_patches: bool = True) -> str:
    """The revision results of a preset report, without loading it: what a cache of results
    must key on, so retrained or re-pulled weights never serve stale results."""
    preset = preset_for(preset_id)
    shifted = shifted_patches and preset.shifted_patches
    return _result_revision(_source(preset, model_dir)[1], shifted)


def _result_revision(weights: str, shifted_patches: bool) -> str:
    # The sampler is part of what a result is: the same weights draw other pictures without it.
    return weights + ("+shifted-patches" if shifted_patches else "")


def _source(preset: Preset, model_dir: Path) -> tuple[Path | None, str]:
    """Where a preset's weights are (None: built in-process) and their revision."""
    if preset.bundled:
        source = BUNDLED_DIR / preset.id
        return source, _bundled_revision(source)
    if preset.offline:
        return None, OFFLINE_REVISION
    source = Path(preset.repo) if Path(preset.id).is_dir() else model_dir / preset.id
    if not (source / "model_index.json").is_file():
        raise ModelUnavailable(
            f"model preset {preset.id} ({preset.repo}, {preset.download_gb:g} GB) is not "
            f"on this machine. Run `spotforge models pull {preset.id}` where there is "
            "network, or choose an offline preset: "
            + ", ".join(p.id for p in PRESETS.values() if p.offline)
        )
    return source, _revision_of(source)


def _bundled_revision(path: Path) -> str:
    """A digest of the shipped weights: a retrained mini-sd is a different revision."""
    if not (path / "model_index.json").is_file():
        raise ModelUnavailable(f"the bundled weights are missing from {path}; reinstall Spotforge")
    digest = hashlib.sha256()
    for file in sorted(path.rglob("*.safetensors")):
        digest.update(file.read_bytes())
    return f"bundled:{digest.hexdigest()[:16]}"


def _revision_of(path: Path) -> str:
    pinned = path / REVISION_FILE
    return pinned.read_text().strip() if pinned.is_file() else f"local:{path.resolve()}"


def _directory_preset(path: Path) -> Preset:
    index = json.loads((path / "model_index.json").read_text())
    family = FAMILY_OF_CLASS.get(index.get("_class_name", ""))
    if family is None:
        raise ModelUnavailable(
            f"{path} holds a {index.get('_class_name')!r}, which Spotforge does not run"
        )
    like = next(p for p in PRESETS.values() if p.family == family)
    # SD3 saved without T5 (like mini-dit) is called with no T5 tokens, as mini-dit is.
    no_t5 = family == "sd3" and index.get("text_encoder_3") == [None, None]
    return replace(
        like,
        id=str(path),
        repo=str(path),
        licence="see the model's own card",
        bundled=False,
        trained_on=None,
        skip_tasks=(),
        call_options=(("max_sequence_length", 0),) if no_t5 else (),
        shifted_patches=False,  # a saved pipeline is sampled as diffusers samples it
    )
