"""An owner's own pictures in a scene: cropped around their focus point from full resolution,
graded toward the audience's light, and clips trimmed to the scene or looped without a jump."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from PIL import Image

from templates import footage
from templates.grading import grade
from templates.motion import Clip, Still, animate
from templates.spec import Motion

SIZE = (320, 180)
STILL = Motion(type="still")


def _quadrants(width: int = 2400, height: int = 4800) -> Image.Image:
    """A tall photo: red top left, green top right, blue bottom left, white bottom right."""
    pixels = np.zeros((height, width, 3), np.uint8)
    pixels[: height // 2, : width // 2] = (220, 30, 30)
    pixels[: height // 2, width // 2 :] = (30, 200, 30)
    pixels[height // 2 :, : width // 2] = (30, 30, 220)
    pixels[height // 2 :, width // 2 :] = (240, 240, 240)
    return Image.fromarray(pixels)


def _mean(image: Image.Image) -> np.ndarray:
    return np.asarray(image, np.float32).reshape(-1, 3).mean(0)


def test_the_focus_point_decides_what_of_the_photo_fills_the_frame():
    photo = _quadrants()
    top = animate(Still(photo, focus=(0.0, 0.0)), STILL, 3.0, SIZE)(0.0)
    bottom = animate(Still(photo, focus=(1.0, 1.0)), STILL, 3.0, SIZE)(0.0)
    # A tall photo cropped to 16:9 keeps a band of it: the top one is red and green, the
    # bottom one blue and white, and nothing of the other half shows.
    assert top.size == bottom.size == SIZE
    top_px, bottom_px = np.asarray(top, np.int16), np.asarray(bottom, np.int16)
    assert np.abs(top_px[:, :100] - (220, 30, 30)).max() < 12
    assert np.abs(top_px[:, -100:] - (30, 200, 30)).max() < 12
    assert np.abs(bottom_px[:, :100] - (30, 30, 220)).max() < 12
    assert np.abs(bottom_px[:, -100:] - (240, 240, 240)).max() < 12


def test_a_full_resolution_photo_keeps_its_detail():
    """Fine stripes of a 4K photo stay sharp at 1080p: scaled down once from full resolution,
    never softened as an enlarged 128-pixel generated background is."""
    checks = (np.indices((2160, 3840)).sum(0) % 16 < 8).astype(np.uint8) * 255
    photo = Image.fromarray(np.dstack([checks] * 3))
    frame = animate(Still(photo), STILL, 3.0, (1920, 1080))(0.0)
    assert np.asarray(frame, np.float32).std() > 90  # stripes 4 pixels wide: a flat grey is 0


def test_grading_moves_a_photo_toward_the_audience_s_light_and_keeps_it_recognisable():
    photo = _quadrants(400, 400)  # a square: its quadrants at 100 and 300
    day, golden, night = (grade(photo, light) for light in ("day", "golden", "night"))
    assert np.array_equal(np.asarray(day), np.asarray(photo.convert("RGB")))
    ramp = Image.fromarray(np.tile(np.arange(256, dtype=np.uint8), (4, 1))).convert("RGB")
    for light in ("golden", "night"):
        levels = np.asarray(grade(ramp, light), np.int16)[0]
        assert (np.diff(levels, axis=0) >= 0).all()  # tones keep their order
    before, warm, dark = _mean(photo), _mean(golden), _mean(night)
    assert warm[0] / warm[2] > 1.1 * before[0] / before[2]  # warmer
    assert np.asarray(golden, np.float32).std() < np.asarray(photo, np.float32).std()  # softer
    assert dark.mean() < 0.8 * before.mean()  # darker
    assert dark[2] / dark[0] > 1.1 * before[2] / before[0]  # cooler
    # Subtle: each quadrant is still its own colour, and golden moves no level by a sixth.
    shift = np.abs(np.asarray(golden, np.int16) - np.asarray(photo, np.int16)).max()
    assert shift <= 255 / 6
    for graded in (golden, night):
        quarters = np.asarray(graded)[[100, 100, 300, 300], [100, 300, 100, 300]]
        assert [int(np.argmax(q)) for q in quarters[:3]] == [0, 1, 2]
    with pytest.raises(ValueError, match="unknown light"):
        grade(photo, "dusk")


def _ramp_clip(frames: int) -> Clip:
    """A clip whose frame i is a flat grey of level 40 + 4 i: its motion is its level."""
    return Clip([Image.new("RGB", SIZE, (40 + 4 * i,) * 3) for i in range(frames)], fps=30)


def _levels(frame_fn, seconds: float, fps: float = 30000 / 1001) -> np.ndarray:
    return np.array(
        [np.asarray(frame_fn(n / fps))[0, 0, 0] for n in range(round(seconds * fps))], float
    )


def test_a_clip_longer_than_its_scene_plays_at_its_own_speed_and_is_trimmed():
    levels = _levels(animate(_ramp_clip(60), STILL, 1.0, SIZE), 1.0)
    assert levels[0] == 40
    assert levels[-1] == pytest.approx(40 + 4 * 29 * 30000 / 30030, abs=2)  # 1 s of 2 s
    assert (np.diff(levels) > 0).all()  # every frame moves on; none repeats


def test_a_clip_shorter_than_its_scene_loops_with_a_crossfade_not_a_jump():
    clip = _ramp_clip(30)  # 1 s: 40 to 156
    levels = _levels(animate(clip, STILL, 3.0, SIZE), 3.0)
    steps = np.abs(np.diff(levels))
    # Within the clip a frame moves 4 levels; over a loop's seam the end fades into the start,
    # so no step is a jump back of over 100 levels.
    assert steps.max() < 12, steps.max()
    assert levels.min() == 40 and levels.max() > 110  # it plays on (its end fades into its start)
    assert (levels[40:] < 90).any()  # the start comes back after the first pass


def test_an_owner_clip_is_decoded_at_the_frame_s_size_around_its_focus(tmp_path):
    path = tmp_path / "shop.mp4"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-f", "lavfi", "-i",
         "color=c=red:s=320x480:d=2,drawbox=y=240:w=320:h=240:color=blue:t=fill",
         "-r", "25", "-c:v", "libx264", "-pix_fmt", "yuv420p", str(path)],
        check=True,
    )  # fmt: skip
    top = footage.clip(path, SIZE, 1.0, focus=(0.5, 0.0))
    bottom = footage.clip(path, SIZE, 1.0, focus=(0.5, 1.0), light="night")
    assert top.fps == footage.RATE and 29 <= len(top.frames) <= 32  # a second, not the 2 s
    assert top.frames[0].size == SIZE
    red, blue = _mean(top.frames[0]), _mean(bottom.frames[0])
    assert red[0] > 200 and red[2] < 40  # the portrait clip's top half: red
    assert 120 < blue[2] < 215 and blue[0] < 40  # its bottom: blue, darker at night
    first = footage.first_frame(path, SIZE, focus=(0.5, 0.0))
    assert np.array_equal(np.asarray(first), np.asarray(top.frames[0]))
    (tmp_path / "broken.mp4").write_bytes(path.read_bytes()[:800])
    with pytest.raises(ValueError):
        footage.clip(tmp_path / "broken.mp4", SIZE, 1.0)
