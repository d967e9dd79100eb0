"""The model presets: what each model is, where its weights come from, and under what licence.

Hub presets load real checkpoints (safetensors only, no remote code) from a local copy made by
`spotforge models pull ID`. Offline presets need no download: `mini-sd` is our own trained model,
whose weights ship in engine/weights; the tiny-* presets are built in-process (engine.offline)
from random weights. A directory holding a diffusers pipeline can be loaded too (engine.loading).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.errors import ModelUnavailable
from engine.requests import Task

# What runs when no other model is configured: model v2, whose built-in places are
# recognisable (drawn from their layouts) and whose finals carry about 6x mini-sd's detail.
DEFAULT_PRESET = "landmark-dit"
IMAGE_TASKS = (Task.TEXT_TO_IMAGE, Task.IMAGE_TO_IMAGE, Task.INPAINT)
I2V_TASKS = (Task.IMAGE_TO_VIDEO, Task.REFERENCE_TO_VIDEO)

# The diffusers pipeline class per task, by model family.
PIPELINES: dict[str, dict[Task, str]] = {
    "sd": {
        Task.TEXT_TO_IMAGE: "StableDiffusionPipeline",
        Task.IMAGE_TO_IMAGE: "StableDiffusionImg2ImgPipeline",
        Task.INPAINT: "StableDiffusionInpaintPipeline",
    },
    "sdxl": {
        Task.TEXT_TO_IMAGE: "StableDiffusionXLPipeline",
        Task.IMAGE_TO_IMAGE: "StableDiffusionXLImg2ImgPipeline",
        Task.INPAINT: "StableDiffusionXLInpaintPipeline",
    },
    "sd3": {
        Task.TEXT_TO_IMAGE: "StableDiffusion3Pipeline",
        Task.IMAGE_TO_IMAGE: "StableDiffusion3Img2ImgPipeline",
        Task.INPAINT: "StableDiffusion3InpaintPipeline",
    },
    "flux": {
        Task.TEXT_TO_IMAGE: "FluxPipeline",
        Task.IMAGE_TO_IMAGE: "FluxImg2ImgPipeline",
        Task.INPAINT: "FluxInpaintPipeline",
    },
    "wan-t2v": {Task.TEXT_TO_VIDEO: "WanPipeline"},
    "wan-i2v": {t: "WanImageToVideoPipeline" for t in I2V_TASKS},
    "ltx": {
        Task.TEXT_TO_VIDEO: "LTXPipeline",
        Task.IMAGE_TO_VIDEO: "LTXImageToVideoPipeline",
        Task.REFERENCE_TO_VIDEO: "LTXImageToVideoPipeline",
    },
}


@dataclass(frozen=True)
class Preset:
    id: str
    family: str
    licence: str
    steps: int
    guidance: float
    width: int
    height: int
    repo: str | None = None  # hub repository; None for offline presets
    bundled: bool = False  # weights ship in engine/weights/<id>
    revision: str = "main"  # pinned at pull time: the commit fetched is what loads after
    num_frames: int = 1
    fps: int = 16
    # torch dtype name per device type; float32 on CPU, where half precision is slow.
    dtypes: dict[str, str] = field(
        default_factory=lambda: {"cuda": "bfloat16", "mps": "float16", "cpu": "float32"}
    )
    download_gb: float = 0.0
    description: str = ""
    # Which of engine.training's procedural scenes it was trained on, only: "archetypes"
    # (landscapes) or "landmarks" (the built-in places), so a classifier of those scenes can
    # say what its pictures show (engine.judging); no classifier knows a hub model's pictures.
    trained_on: str | None = None
    # Pipeline arguments this model is always called with (the plain diffusers baseline too).
    call_options: tuple[tuple[str, object], ...] = ()
    skip_tasks: tuple[Task, ...] = ()  # tasks of its family this model cannot do
    # A transformer whose pictures show its patch grid, drawn with shifted patches
    # (engine.patch_shift); part of what its results are, so its revision says so.
    shifted_patches: bool = False
    # The size its learned upscaler (engine.upscaling) draws: a request for exactly that size
    # is drawn at the preset's own size and upscaled, every other size as asked.
    upscale_to: tuple[int, int] | None = None
    # A model trained on the landmark scenes draws a built-in place from its layout
    # (engine.layouts): the share of the schedule it denoises from the noised layout.
    layout_strength: float | None = None

    @property
    def offline(self) -> bool:
        return self.repo is None

    @property
    def tasks(self) -> tuple[Task, ...]:
        return tuple(t for t in PIPELINES[self.family] if t not in self.skip_tasks)

    def pipeline_class(self, task: Task) -> str:
        try:
            if task in self.skip_tasks:
                raise KeyError(task)
            return PIPELINES[self.family][task]
        except KeyError:
            supported = ", ".join(t.value for t in self.tasks)
            raise ModelUnavailable(
                f"preset {self.id} cannot do {task.value}; it does: {supported}"
            ) from None


PRESETS: dict[str, Preset] = {
    p.id: p
    for p in [
        # Hub models. Licences as their model cards state them.
        Preset(
            "sd-turbo",
            "sd",
            "Stability AI Community License (free below US$1M revenue)",
            steps=2,
            guidance=0.0,
            width=512,
            height=512,
            repo="stabilityai/sd-turbo",
            download_gb=2.6,
            description="Fast previews in 1-4 steps; usable on CPU.",
        ),
        Preset(
            "sdxl",
            "sdxl",
            "CreativeML Open RAIL++-M",
            steps=30,
            guidance=5.0,
            width=1024,
            height=1024,
            repo="stabilityai/stable-diffusion-xl-base-1.0",
            dtypes={"cuda": "float16", "mps": "float16", "cpu": "float32"},
            download_gb=7.0,
            description="High-quality stills, image-to-image and inpainting.",
        ),
        Preset(
            "flux-schnell",
            "flux",
            "Apache-2.0",
            steps=4,
            guidance=0.0,
            width=1024,
            height=1024,
            repo="black-forest-labs/FLUX.1-schnell",
            download_gb=33.7,
            description="FLUX.1 [schnell]: top image quality in 4 steps, permissive licence.",
        ),
        Preset(
            "wan2.1-t2v-1.3b",
            "wan-t2v",
            "Apache-2.0",
            steps=30,
            guidance=5.0,
            width=832,
            height=480,
            num_frames=81,
            fps=16,
            repo="Wan-AI/Wan2.1-T2V-1.3B-Diffusers",
            download_gb=28.0,
            description="Wan 2.1 text-to-video, 480p.",
        ),
        Preset(
            "wan2.1-i2v-14b-480p",
            "wan-i2v",
            "Apache-2.0",
            steps=30,
            guidance=5.0,
            width=832,
            height=480,
            num_frames=81,
            fps=16,
            repo="Wan-AI/Wan2.1-I2V-14B-480P-Diffusers",
            download_gb=77.0,
            description="Wan 2.1 image-to-video (and reference-to-video), 480p.",
        ),
        Preset(
            "ltx-video",
            "ltx",
            "LTX-Video Open Weights License",
            steps=40,
            guidance=3.0,
            width=704,
            height=480,
            num_frames=121,
            fps=24,
            repo="Lightricks/LTX-Video",
            download_gb=27.0,
            description="LTX-Video: fast text- and image-to-video.",
        ),
        # Offline presets. mini-sd: trained by us (engine.training), the first of them.
        Preset(
            "mini-sd",
            "sd",
            "Apache-2.0 (Spotforge; trained only on our procedural scenes)",
            steps=20,
            guidance=4.0,
            width=128,
            height=128,
            bundled=True,
            trained_on="archetypes",
            description="Our own small Stable Diffusion: landscapes, skylines, streets, "
            "beaches, deserts, forests, snowy peaks and lakes, by day, golden hour or night.",
        ),
        # mini-dit: the same scenes drawn by an SD3-style transformer (engine.training.dit),
        # so transformer caches are measured on a trained model.
        Preset(
            "mini-dit",
            "sd3",
            "Apache-2.0 (Spotforge; trained only on our procedural scenes)",
            steps=20,
            guidance=4.0,
            width=128,
            height=128,
            bundled=True,
            trained_on="archetypes",
            call_options=(("max_sequence_length", 0),),  # no T5: no T5 tokens
            # SD3's inpaint pipeline takes a 16-channel latent space; this one is mini-sd's 4.
            skip_tasks=(Task.INPAINT,),
            description="Our own small Stable Diffusion 3 (a diffusion transformer): the same "
            "landscapes and times of day as mini-sd.",
        ),
        # landmark-dit: model v2's first stage (engine.training.landmark_dit), the built-in
        # geographies by their landmarks, natively 16:9; the default model.
        Preset(
            DEFAULT_PRESET,
            "sd3",
            "Apache-2.0 (Spotforge; trained only on our procedural scenes)",
            steps=20,
            guidance=4.0,
            width=256,
            height=144,
            bundled=True,
            trained_on="landmarks",
            call_options=(("max_sequence_length", 0),),  # no T5: no T5 tokens
            # SD3's image-to-image and inpaint pipelines need a KL autoencoder; this is a DC one.
            skip_tasks=(Task.IMAGE_TO_IMAGE, Task.INPAINT),
            shifted_patches=True,
            upscale_to=(1920, 1080),  # a final's size: engine/weights/landmark-dit/upscaler
            # The last fifth of the schedule: from half of it the model redraws the layout's
            # street and windows as a mosaic, and its final takes little of the layout's detail
            # (engine.layout_detail; docs/benchmarks.md, "Detail from the layout").
            layout_strength=0.2,
            description="Our own small Stable Diffusion 3 for places: each built-in geography "
            "by its landmarks (Mission Peak above the bay, a Manhattan avenue with yellow cabs, "
            "...), by day, golden hour or night, in 16:9; at 1920x1080 through its own "
            "learned upscaler, a built-in place with its layout's fine detail.",
        ),
        # Fixed-seed random weights built in-process (tests, benchmarks).
        Preset(
            "tiny-sd",
            "sd",
            "Apache-2.0 (Spotforge)",
            steps=8,
            guidance=5.0,
            width=256,
            height=256,
            description="Random-weight Stable Diffusion in miniature.",
        ),
        Preset(
            "tiny-flux",
            "flux",
            "Apache-2.0 (Spotforge)",
            steps=4,
            guidance=0.0,
            width=256,
            height=256,
            description="Random-weight FLUX in miniature.",
        ),
        Preset(
            "tiny-wan",
            "wan-t2v",
            "Apache-2.0 (Spotforge)",
            steps=4,
            guidance=5.0,
            width=128,
            height=128,
            num_frames=9,
            fps=8,
            description="Random-weight Wan text-to-video in miniature.",
        ),
        Preset(
            "tiny-wan-i2v",
            "wan-i2v",
            "Apache-2.0 (Spotforge)",
            steps=4,
            guidance=5.0,
            width=128,
            height=128,
            num_frames=9,
            fps=8,
            description="Random-weight Wan image-to-video in miniature.",
        ),
    ]
}


def get_preset(preset_id: str) -> Preset:
    try:
        return PRESETS[preset_id]
    except KeyError:
        raise ModelUnavailable(
            f"unknown model preset {preset_id!r}; known: {', '.join(PRESETS)}"
        ) from None
