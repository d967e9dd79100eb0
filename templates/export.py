"""Storyboard + visuals -> a spot file, checked by QC.

moviepy lays out the timeline (one clip per scene: its moving picture under its overlay, with
crossfades); its frames are piped to one ffmpeg encode with the broadcast settings, muxed with
the audio bed and the brief's voice-over, loudness-normalised. Both tiers share this code, so a
preview shows exactly the timing, layout and sound of the final: only the size, the encoder
settings and the watermark differ.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path

import numpy as np
from moviepy import VideoClip, VideoFileClip, concatenate_videoclips
from PIL import Image, ImageDraw, ImageFont

from templates import audio, mix, qc, qc_specs
from templates.cards import brand_card
from templates.motion import Clip, Still, animate, grain
from templates.overlay import FALLBACK_BOLD, JUDGED_AT, overlay
from templates.spec import SHAPES
from templates.storyboard import Scene, Storyboard

FPS = Fraction(30000, 1001)


@dataclass(frozen=True)
class Tier:
    name: str
    width: int
    height: int
    video_args: tuple[str, ...]
    audio_kbps: int
    watermark: bool
    spec: qc.Spec


# x264's frame threads make its rate control depend on timing, so two encodes of the same
# frames differ, and so do its slice threads under the constant bitrate (measured: three
# encodes, three files); one thread makes the same variant the same file (measured no slower
# here, where two threads already draw the frames beside it).
DETERMINISTIC = ("-threads", "1")
FINAL = Tier(
    "final",
    1920,
    1080,
    # Constant 18 Mbps (filler keeps it there on simple pictures), High profile, BT.709.
    (
        "-c:v",
        "libx264",
        "-preset",
        "veryfast",
        "-tune",
        "grain",  # keeps the moving grain in every frame, B-frames too: none repeats the last
        "-profile:v",
        "high",
        "-level:v",
        "4.1",
        "-b:v",
        "18M",
        "-minrate",
        "18M",
        "-maxrate",
        "18M",
        "-bufsize",
        "18M",
        "-x264-params",
        "nal-hrd=cbr:force-cfr=1",
        *DETERMINISTIC,
    ),
    audio_kbps=256,
    watermark=False,
    spec=qc.BROADCAST,
)
PREVIEW = Tier(
    "preview",
    640,
    360,
    ("-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high", "-crf", "26", *DETERMINISTIC),
    audio_kbps=128,
    watermark=True,
    spec=qc.PREVIEW,
)
TIERS = {t.name: t for t in (FINAL, PREVIEW)}


def shaped(tier: Tier, shape: str) -> Tier:
    """The tier in a screen shape (`templates.spec.SHAPES`): the master's size for a final, a
    third of it for a preview, each checked by its shape's spec. The encoder settings, the
    sound and the timing are the tier's in every shape."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; one of: {', '.join(SHAPES)}")
    if shape == "16:9":
        return tier
    width, height = (side * tier.width // FINAL.width for side in SHAPES[shape])
    spec = (
        qc_specs.MASTERS[shape]
        if tier.name == FINAL.name
        else replace(tier.spec, name=f"{tier.spec.name} ({shape})", width=width, height=height)
    )
    return replace(tier, width=width, height=height, spec=spec)


@dataclass
class Export:
    path: Path
    tier: str
    report: qc.Report
    timings: dict[str, float] = field(default_factory=dict)
    frames: int = 0


def render(
    storyboard: Storyboard,
    visuals: dict[int, Still | Clip],
    tier: Tier,
    out: Path,
    audio_bed: Path | None = None,
) -> Export:
    """Render the spot. `visuals` maps scene index to its picture; brand scenes need none."""
    started = time.perf_counter()
    size = (tier.width, tier.height)
    missing = [
        s.index + 1
        for s in storyboard.scenes
        if s.visual.source != "brand" and s.index not in visuals
    ]
    if missing:
        raise ValueError(f"no visual given for scene(s) {missing}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="spotforge-") as tmp:
        t0 = time.perf_counter()
        wav = Path(tmp) / "bed.wav"
        bed = (
            audio.decode(audio_bed, storyboard.duration)
            if audio_bed
            else audio.built_in_bed(
                storyboard.audio_style, storyboard.audio_bpm, storyboard.duration
            )
        )
        audio.normalize(mix.voiced(bed, storyboard), wav)
        timings["audio"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        timeline = _timeline(storyboard, visuals, size)
        watermark = _watermark(size) if tier.watermark else None
        frames = round(storyboard.duration * FPS)  # whole frames nearest the nominal length
        _encode(timeline, frames, watermark, wav, tier, out, storyboard.duration)
        timings["video"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    report = qc.check(out, tier.spec)
    timings["qc"] = time.perf_counter() - t0
    timings["total"] = time.perf_counter() - started
    return Export(out, tier.name, report, timings, frames)


def scene_stills(
    storyboard: Storyboard,
    visuals: dict[int, Still | Clip],
    size: tuple[int, int],
    product: Image.Image | None = None,
) -> list[Image.Image]:
    """Each scene as it looks halfway through, copy and logo included: storyboard and template
    thumbnails, drawn by the same code as the video. A scene without its visual shows the
    brand card in its place, with `product` (a cut-out) on it in a product scene."""
    stills = []
    for scene in storyboard.scenes:
        visual = visuals.get(scene.index)
        if visual is None:
            subject = product if scene.visual.source == "product" else None
            card = brand_card(storyboard.brief.brand, size, seed=scene.index)
            visual = Still(card, subject=subject)
        picture = _scene_picture(scene, visual, storyboard, size, 0.0)
        stills.append(picture(scene.duration / 2))
    return stills


def frames_at(video: Path, times: list[float]) -> list[Image.Image]:
    """Pictures of a rendered spot at these times (seconds): its scene thumbnails."""
    with VideoFileClip(str(video), audio=False) as clip:
        last = max(clip.duration - 1 / FPS, 0.0)
        return [Image.fromarray(clip.get_frame(min(max(t, 0.0), last))) for t in times]


def _timeline(storyboard: Storyboard, visuals, size) -> VideoClip:
    """One moviepy clip per scene, chained. A crossfade belongs to the incoming scene: for its
    first moments it blends in over the previous scene, whose motion runs on beneath it."""
    scenes = storyboard.scenes
    leads = [s.transition.duration if s.transition.type == "crossfade" else 0.0 for s in scenes]
    pictures = []
    for i, scene in enumerate(scenes):
        tail = leads[i + 1] if i + 1 < len(scenes) else 0.0
        pictures.append(_scene_picture(scene, visuals.get(scene.index), storyboard, size, tail))
    clips = []
    for i, scene in enumerate(scenes):
        own, lead = pictures[i], leads[i]
        previous = pictures[i - 1] if lead else None
        before = scenes[i - 1].duration if lead else 0.0

        def frame(t, own=own, lead=lead, previous=previous, before=before) -> np.ndarray:
            image = own(t)
            if previous is not None and t < lead:
                image = Image.blend(previous(before + t), image, t / lead)
            return np.asarray(image)

        clips.append(VideoClip(frame_function=frame, duration=scene.duration))
    return concatenate_videoclips(clips, method="chain")


def _scene_picture(scene: Scene, visual, storyboard: Storyboard, size, tail: float):
    """The scene's moving picture with its overlay, defined `tail` seconds past its end."""
    brand = storyboard.brief.brand
    if scene.visual.source == "brand":
        visual = Still(brand_card(brand, size, seed=scene.index))
    picture = animate(visual, scene.motion, scene.duration + tail, size)
    layer, _ = overlay(scene, brand, [picture(f * scene.duration) for f in JUDGED_AT])
    stamp = _Stamp(layer)

    def frame(t: float) -> Image.Image:
        return stamp.on(picture(t))

    return frame


class _Stamp:
    """An RGBA layer pasted onto RGB frames; only its non-transparent box is touched."""

    def __init__(self, layer: Image.Image):
        self.box = layer.getbbox()
        self.patch = layer.crop(self.box) if self.box else None

    def on(self, image: Image.Image) -> Image.Image:
        if self.patch is not None:
            image.paste(self.patch, self.box[:2], self.patch)
        return image


def _watermark(size) -> Image.Image:
    w, h = size
    layer = Image.new("RGBA", size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    short = min(w, h)  # sized on the short side, as the copy is: the words fit an upright frame
    font = ImageFont.truetype(str(FALLBACK_BOLD), round(0.09 * short))
    text = "PREVIEW"
    tw = font.getlength(text)
    for row, y in enumerate(range(round(0.1 * h), h, round(0.3 * short))):
        for x in range(-round(tw) + (row % 2) * round(tw / 2), w, round(tw * 1.6)):
            draw.text((x, y), text, font=font, fill=(255, 255, 255, 56))
    small = ImageFont.truetype(str(FALLBACK_BOLD), round(0.035 * short))
    draw.text(
        (round(0.05 * w), round(0.9 * h)),
        "Spotforge preview - not for broadcast",
        font=small,
        fill=(255, 255, 255, 170),
    )
    return layer


def _encode(
    timeline, frames: int, watermark, wav: Path, tier: Tier, out: Path, seconds: float
) -> None:
    w, h = tier.width, tier.height
    command = [
        audio.tool(),
        "-v",
        "error",
        "-y",
        "-f",
        "rawvideo",
        "-pix_fmt",
        "rgb24",
        "-s",
        f"{w}x{h}",
        "-r",
        str(FPS),
        "-i",
        "-",
        "-i",
        str(wav),
        "-map",
        "0:v",
        "-map",
        "1:a",
        "-vf",
        "scale=out_color_matrix=bt709:out_range=tv,format=yuv420p",
        *tier.video_args,
        "-colorspace",
        "bt709",
        "-color_primaries",
        "bt709",
        "-color_trc",
        "bt709",
        "-r",
        str(FPS),
        # The pipe carries exactly `frames` frames. A -frames:v limit would also end the file
        # there, cutting off the audio still buffered behind the video (0.4 s, measured).
        "-af",
        "apad",
        "-t",
        f"{seconds:.3f}",
        "-c:a",
        "aac",
        "-b:a",
        f"{tier.audio_kbps}k",
        "-ar",
        str(audio.RATE),
        "-ac",
        "2",
        "-movflags",
        "+faststart",
        str(out),
    ]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    mark = _Stamp(watermark) if watermark is not None else None

    def render_frame(n: int) -> bytes:
        pixels = grain(timeline.get_frame(n / float(FPS)), n)  # no frame repeats the last
        if mark is None:
            return pixels.tobytes()
        return mark.on(Image.fromarray(pixels)).tobytes()

    # Pillow releases the GIL while resampling: two threads keep both cores busy with ffmpeg.
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            for start in range(0, frames, 16):
                chunk = range(start, min(start + 16, frames))
                for data in pool.map(render_frame, chunk):
                    process.stdin.write(data)
        process.stdin.close()
    except BrokenPipeError:
        pass  # ffmpeg stopped early; its error is reported below
    if process.wait() != 0:
        raise RuntimeError(
            f"ffmpeg failed to encode {out.name}: {process.stderr.read().decode()[-500:]}"
        )
