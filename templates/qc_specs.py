"""Delivery specs: what a file must be for each destination, as data (`SPECS`).

Each value is the publisher's own where it publishes one (the page is named beside it); where it
publishes none, the value is the commonly published figure and the comment says so. The picture
and sound checks (black, frozen, flashing, silence, clipping, legal range) are ours for every
CTV destination, with their reasons in `CTV_CHECKS`. This module imports nothing heavy, so the
CLI can list the names in its help.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

NTSC, FILM = Fraction(30000, 1001), Fraction(24000, 1001)


@dataclass(frozen=True)
class Spec:
    name: str
    width: int
    height: int
    frame_rates: tuple[Fraction, ...] = (NTSC, FILM)
    durations: tuple[float, ...] = (15.0, 30.0)  # exact lengths, to the nearest frame
    duration_ranges: tuple[tuple[float, float], ...] = ()  # or any length inside one of these
    video_codecs: tuple[str, ...] = ("h264", "prores")
    min_video_kbps: int | None = None
    audio_codecs: tuple[str, ...] = ("aac", "pcm_s16le", "pcm_s24le")
    sample_rates: tuple[int, ...] = (48_000,)
    min_aac_kbps: int | None = None
    loudness: tuple[float, float] | None = None  # LKFS target, tolerance
    max_true_peak: float | None = None
    check_duplicates: bool = False  # no frame repeats the last, and no slate or countdown
    # Checks on the decoded picture and sound (templates/qc_checks.py); None leaves one out.
    max_black_s: float | None = None  # longest black stretch inside the spot
    edge_black_s: float = 0.0  # longest black allowed at the head and at the tail
    max_freeze_s: float | None = None  # longest frozen picture
    max_flashes: int | None = None  # flashes in any one second
    max_out_of_range: float | None = None  # share of a frame outside legal levels
    max_silence_s: float | None = None  # longest silence, anywhere; a silent track fails
    max_clipped: int | None = None  # samples at full scale

    @property
    def checks_picture(self) -> bool:
        limits = (self.max_black_s, self.max_freeze_s, self.max_flashes, self.max_out_of_range)
        return any(limit is not None for limit in limits)


# No CTV publisher below publishes numbers for these; they are what playout QC commonly applies.
CTV_CHECKS = {
    # A black hole of over a second mid-spot reads as a playout fault (blackdetect's own default
    # flags 2 s). At head and tail black is leader, which Hulu and Amazon refuse (below); a
    # half-second fade is commonly allowed.
    "max_black_s": 1.0,
    "edge_black_s": 0.5,
    # A picture unchanged for over 2 s is a stalled render or a frozen source: CTV publishers
    # refuse "visible stuttering or duplicate frames" (e.g. Basis DSP, "Video ads on premium
    # CTV inventory"); our still scenes move and carry grain, so they never freeze.
    "max_freeze_s": 2.0,
    # Ofcom's guidance on photosensitive epilepsy (Broadcasting Code, section 2) and ITU-R
    # BT.1702: no more than three flashes in any one second.
    "max_flashes": 3,
    # EBU R 103 v3.0 (2020): up to 1 % of the picture may stray outside the legal levels, judged
    # through a spatial low-pass filter.
    "max_out_of_range": 0.01,
    # Hulu and Roku ad specs: "audio is required". Over 2 s of silence mid-spot is dead air.
    "max_silence_s": 2.0,
    # With a true-peak ceiling under full scale, any sample at full scale means the mix clipped.
    "max_clipped": 0,
}

# DESIGN.md, "Broadcast spec (CTV master)": our own master, which every CTV destination takes.
# Loudness is ATSC A/85 (-24 LKFS ±2, the US TV rule under the CALM Act).
BROADCAST = Spec(
    "broadcast (CTV master)",
    1920,
    1080,
    min_video_kbps=15_000,
    min_aac_kbps=192,
    loudness=(-24.0, 2.0),
    max_true_peak=-2.0,
    check_duplicates=True,
    **CTV_CHECKS,
)

# Hulu Ad Manager, "Tech Specs for Video Ads" (home.admanager.hulu.com/tech-specs-for-video-ads):
# 1920x1080 preferred (1280x720 accepted; we deliver 1080p), 16:9, 23.98/25/29.97 fps, progressive,
# video >= 15 Mb/s, audio 2-channel 48 kHz >= 192 kb/s PCM or AAC, 15-30 s. Hulu's "Video
# Commercial" page: "Video must be submitted without leaders (i.e. slates, countdowns)", so no
# black at the head or tail either. Hulu publishes no loudness target: A/85's, commonly published.
HULU = replace(
    BROADCAST,
    name="Hulu",
    frame_rates=(FILM, Fraction(25), NTSC),
    durations=(),
    duration_ranges=((15.0, 30.0),),
    edge_black_s=0.0,
)

# Roku Ads Manager, "Creative guidelines" (help.ads.roku.com/en/articles/7154647): 16:9 (1920x1080,
# as commonly published), 23.98/25/29.97 fps, video >= 6 Mbps, audio 2-channel 48 kHz >= 96 kbps,
# 13-17 s or 28-31 s (its "Creative technical requirements" page allows 6-92 s). Roku's 2021 "Ad
# Video Specifications" sheet: -23 integrated LUFS, "broadcast ready", no pre-air slates; it gives
# no tolerance, so A/85's ±2 is used.
ROKU = replace(
    BROADCAST,
    name="Roku",
    frame_rates=(FILM, Fraction(25), NTSC),
    durations=(),
    duration_ranges=((13.0, 17.0), (28.0, 31.0)),
    min_video_kbps=6_000,
    min_aac_kbps=96,
    loudness=(-23.0, 2.0),
)

# Amazon Ads, "Streaming TV & Prime Video ad specs"
# (advertising.amazon.com/resources/ad-specs/dsp/video/streaming-tv-prime-video-ads): 16:9, at
# least 1920x1080, 23.976/24/25/29.97 fps constant, Prime Video video >= 15 Mbps, audio >= 192 kbps
# at 44.1 or 48 kHz, US lengths 15, 30, 45 or 60 s. Amazon's moderation of Sponsored Brands video
# names "black or empty frames at the start or end of videos" a top rejection reason; we hold
# Prime Video ads to it too. No loudness target is published: A/85's, commonly published for US
# streaming TV.
AMAZON = replace(
    BROADCAST,
    name="Amazon Prime Video",
    frame_rates=(FILM, Fraction(24), Fraction(25), NTSC),
    durations=(15.0, 30.0, 45.0, 60.0),
    sample_rates=(44_100, 48_000),
    edge_black_s=0.0,
)

# A vertical feed ad that runs on both TikTok and Meta. TikTok Ads, "Video Ads Specifications"
# (ads.tiktok.com/help/article?aid=6669199281502552069): 9:16 at >= 720x1280, 5-60 s, >= 516 kbps.
# Meta Ads Guide, Reels and Stories: 1080x1920 (9:16), as commonly published. Neither publishes
# frame rates (the common 23.976-30 fps are taken), loudness (sound is optional in Meta feeds, so
# neither silence nor level is checked) or legal levels (phones show full range); a true peak of
# -1 dBTP is the commonly published streaming ceiling (AES TD1004, TD1008). Black at the head
# is refused: a feed shows the first frame as the video's still, and the first seconds decide a
# scroll. Feeds take image-led ads, so a still picture is no fault.
SOCIAL_VERTICAL = Spec(
    "social vertical (9:16)",
    1080,
    1920,
    frame_rates=(FILM, Fraction(24), Fraction(25), NTSC, Fraction(30)),
    durations=(),
    duration_ranges=((5.0, 60.0),),
    min_video_kbps=516,
    sample_rates=(44_100, 48_000),
    max_true_peak=-1.0,
    max_black_s=CTV_CHECKS["max_black_s"],
    max_flashes=CTV_CHECKS["max_flashes"],  # WCAG 2.x, 2.3.1: the same three-flash limit online
    max_clipped=CTV_CHECKS["max_clipped"],
)

# A square feed ad on Facebook and Instagram. Meta Ads Guide, Facebook and Instagram Feed video
# (facebook.com/business/ads-guide/video): 1:1 at 1080x1080 recommended, 1 s to 241 min, sound
# optional; no bitrate floor, frame rate or loudness is published, so as for SOCIAL_VERTICAL:
# the common 23.976-30 fps, the -1 dBTP streaming ceiling (AES TD1004, TD1008), no loudness or
# silence rule, no black at the head (a feed shows the first frame as the video's still).
SOCIAL_SQUARE = replace(
    SOCIAL_VERTICAL,
    name="social square (1:1)",
    width=1080,
    height=1080,
    duration_ranges=((1.0, 241 * 60.0),),
    min_video_kbps=None,
)

# The spec each shape's master is checked by when it is made (templates.spec.SHAPES).
MASTERS = {"16:9": BROADCAST, "9:16": SOCIAL_VERTICAL, "1:1": SOCIAL_SQUARE}

# A preview has the final's timing at preview size; it is never delivered.
PREVIEW = Spec("preview", 640, 360)

SPECS = {
    "broadcast": BROADCAST,
    "hulu": HULU,
    "roku": ROKU,
    "amazon": AMAZON,
    "social-vertical": SOCIAL_VERTICAL,
    "social-square": SOCIAL_SQUARE,
    "preview": PREVIEW,
}
