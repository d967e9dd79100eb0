"""The same journey through the API with gradio_client, as a script or an agent would drive it
(the attacks on it are in test_attacks.py)."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from gradio_client import Client, handle_file
from PIL import Image
from skimage import data

from app.services.demo import BRIEF
from templates import qc

pytestmark = pytest.mark.long  # minutes of work: started first (tests/conftest.py)

PASSWORD = "a-long-password"
STARTED = re.compile("Your preview is waiting|Rendering your preview")


def sign_up(url: str, business: str, email: str) -> str:
    """An account made through the sign-up form; returns an API token for it."""
    form = f"business={business}&email={email}&password={PASSWORD}".encode()
    urllib.request.urlopen(urllib.request.Request(url + "/signup", data=form))
    return token(url, email, PASSWORD)


def token(url: str, email: str, password: str) -> str:
    body = json.dumps({"email": email, "password": password}).encode()
    request = urllib.request.Request(
        url + "/api/session", data=body, headers={"content-type": "application/json"}
    )
    return json.load(urllib.request.urlopen(request))["token"]


def client(url: str, token: str) -> Client:
    return Client(url + "/", headers={"Authorization": f"Bearer {token}"}, verbose=False)


def status(url: str, path: str, token: str | None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        return urllib.request.urlopen(urllib.request.Request(url + path, headers=headers)).status
    except urllib.error.HTTPError as exc:
        return exc.code


def until(api: Client, api_name: str, finished: Callable[[str], bool], follow: dict) -> tuple:
    """What the read `api_name` answers once its message says the work is finished. A start
    returns at once with what to follow; a script then reads where the work stands with it (and
    with each answer's own after that), as often as it likes: the page's timer reads every
    second."""
    deadline = time.monotonic() + 600
    while True:
        *answer, follow = api.predict(follow, api_name=api_name)
        if finished(answer[0]):
            return *answer, follow
        assert time.monotonic() < deadline, answer[0]
        time.sleep(1)


def settled(text: str) -> bool:
    return not text.startswith("Rendering the finals")


def create_spot(api: Client, photo: Path, campaign: str) -> int:
    """By keyword, as the README shows; the fields left out keep the page's defaults."""
    spot, _board, scenes = api.predict(
        campaign_name=campaign,
        template_id="product-hero",
        product_photos=[handle_file(str(photo))],
        product_name=BRIEF["product_name"],
        headline=BRIEF["headline"],
        body=BRIEF["body"],
        offer=BRIEF["offer"],
        cta_text=BRIEF["cta_text"],
        cta_url=BRIEF["cta_url"],
        tagline=BRIEF["tagline"],
        api_name="/create_spot",
    )
    assert "Fresh espresso, fast" in scenes
    return int(spot)


@pytest.fixture
def photo(tmp_path) -> Path:
    path = tmp_path / "espresso.png"
    Image.fromarray(data.coffee()).save(path)
    return path


# On PostgreSQL alone: the browser journeys walk the same flow on SQLite, and this one renders
# finals, the costliest thing a test does.
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_the_whole_flow_through_the_api(app_server, photo, tmp_path):
    with app_server() as url:
        api = client(url, sign_up(url, "Harbor Coffee", "owner@harbor.test"))
        assert "Harbor Coffee" in api.predict(api_name="/whoami")
        # What the default model makes of a setting, said before the spot is made: the
        # built-in place it names, or the words it leaves out.
        note = api.predict("Mission Peak in Fremont at sunset", api_name="/setting_words")
        assert note.startswith("Drawn as the built-in place San Francisco Bay Area (Mission "
                               "Peak above the bay) at golden hour")  # fmt: skip
        note = api.predict("a cosy bakery by the harbor", api_name="/setting_words")
        assert note == ("The picture model (landmark-dit) does not know 'a', 'cosy', 'bakery', "
                        "'harbor'; it draws the picture without them.")  # fmt: skip
        assert api.predict("street with buildings at night", api_name="/setting_words") == ""
        spot = create_spot(api, photo, "Espresso week")
        candidates, _ = api.predict(spot, 0, api_name="/background_candidates")
        assert len(candidates) == 3
        api.predict(spot, 1, api_name="/choose_background")
        _board, table = api.predict(spot, "1, 3, 2, 4", api_name="/reorder_scenes")
        assert [row.split("|")[1].strip() for row in table.splitlines()[2:]] == [
            "1. Establishing",
            "2. Offer",
            "3. Hero",
            "4. End card",
        ]
        api.predict(spot, 1, api_name="/regenerate_scene")  # a new background for the opening
        with pytest.raises(Exception, match="brand card"):
            api.predict(spot, 4, api_name="/regenerate_scene")

        # Long work starts and the call returns, with what to follow; reads say how it goes.
        message, video, scenes, job, follow = api.predict(spot, api_name="/render_preview")
        assert STARTED.search(message) and video is None and not scenes and job
        message, video, scenes, follow = until(
            api, "/preview_progress", lambda m: "Preview ready" in m, follow
        )
        assert Path(video).stat().st_size > 0 and len(scenes) == 4 and not follow["live"]
        again = api.predict(follow, api_name="/preview_progress")  # asked again: the same
        assert "Preview ready" in again[0] and len(again[2]) == 4

        places, people = ["San Francisco Bay Area", "Manhattan"], ["Young runners", "Retirees"]
        assert "4 variants" in api.predict(spot, places, people, api_name="/plan_variants")
        started, _gallery, run, follow = api.predict(
            spot, places, people, api_name="/make_variants"
        )
        assert "Making variants: 0 of 4 ready" in started and run
        done, gallery, _ = until(api, "/variants_progress", lambda m: m.startswith("Done:"), follow)
        assert "4 of 4 variants ready" in done and len(gallery) == 4
        captions = [item["caption"] for item in gallery]
        assert "Manhattan · Retirees" in " ".join(captions)
        only = api.predict(spot, "Manhattan", "All", api_name="/variant_gallery")
        assert len(only) == 2 and all("Manhattan" in item["caption"] for item in only)

        # Captions are words; the choices the page offers carry the ids as their values.
        compare_a, *_ = api.predict(spot, api_name="/variant_choices")
        variant = dict(compare_a["choices"])[captions[-1]]
        assert not any("#" in label for label, _ in compare_a["choices"])

        # Watched before paying: the variant's preview clip, made on demand.
        status, clips, watching = api.predict([variant], api_name="/play_variants")
        assert "0 of 1 preview clip ready" in status and clips == []
        status, clips, _ = until(api, "/clips_progress", lambda m: m.endswith("ready."), watching)
        assert status == "1 of 1 preview clip ready." and len(clips) == 1
        ((clip, caption),) = clips
        assert caption == captions[-1] and qc.check(Path(clip), qc.PREVIEW).passed
        order, text = api.predict([variant], api_name="/quote")
        assert "quoted" in text and "USD 49.00" in text
        text, files, _links, follow = api.predict(order, api_name="/approve")
        assert "Rendering the finals: 0 of 1 done" in text and files is None
        text, files, links, _ = until(api, "/order_progress", settled, follow)
        assert "delivered" in text, text
        assert api.predict(order, api_name="/order_status")[0] == text
        final = next(Path(f) for f in files if f.endswith(".mp4"))
        report = qc.check(final, qc.BROADCAST)
        assert report.passed, report.failures
        qc_file = next(Path(f) for f in files if f.endswith(".qc.json"))
        assert json.loads(qc_file.read_text())["passed"] is True
        assert "/download/order/" in links and "/report/render/" in links

        tree = api.predict(1, api_name="/lineage")
        assert "as briefed" in tree and "Manhattan · Retirees (approved)" in tree

        # An agent has every variant checked, and the damaged ones made again: it retries its
        # call (a timeout, a burst) under the same idempotency key, which starts nothing more.
        frames = [p for p in (tmp_path / "var" / "assets").rglob("*.png")
                  if Image.open(p).size == (1280, 720)]  # fmt: skip
        for path in frames:  # every key frame edited on disk since it was stored
            path.write_bytes(path.read_bytes() + b"edited")
        review = api.predict(spot, api_name="/review_variants")
        assert len(review["variants"]) == 5  # the spot as briefed and its 4 variants
        assert all(v["checks"]["integrity"]["passed"] is False for v in review["variants"])
        fixing = api.predict(spot, "agent-fix-1", api_name="/fix_variants")
        # The approved variant is the owner's decision: left as it is.
        assert sorted(r["variant"] for r in fixing["retries"]) == sorted(
            v["id"] for v in review["variants"] if v["id"] != variant
        )
        assert all(r["because"] == ["integrity"] for r in fixing["retries"])
        assert fixing["out_of_tries"] == []
        assert api.predict(spot, "agent-fix-1", api_name="/fix_variants") == fixing
        retries = [r["retry"] for r in fixing["retries"]]
        deadline = time.monotonic() + 300
        while (made := api.predict(retries, api_name="/fix_progress"))["made"] < len(retries):
            assert time.monotonic() < deadline, made
            time.sleep(1)
        fixed = {v["id"]: v for v in api.predict(spot, api_name="/review_variants")["variants"]}
        assert sorted(fixed) == sorted([*retries, variant])
        assert all(fixed[r]["passed"] for r in retries) and not fixed[variant]["passed"]
        assert api.predict(spot, "agent-fix-1", api_name="/fix_variants") == fixing  # kept
        assert api.predict(spot, "agent-fix-2", api_name="/fix_variants")["retries"] == []

        # Another business asks about this spot: not found, whatever key it sends.
        other = client(url, sign_up(url, "Trailhead Running", "owner@trailhead.test"))
        for call in ((spot,), (spot, "agent-fix-1")):
            name = "/review_variants" if len(call) == 1 else "/fix_variants"
            with pytest.raises(Exception, match=f"spot {spot} not found"):
                other.predict(*call, api_name=name)
        with pytest.raises(Exception, match=f"variant {variant} not found"):
            other.predict([variant], api_name="/play_variants")
        with pytest.raises(Exception, match=r"job \d+ not found"):
            other.predict(watching, api_name="/clips_progress")  # A's clips, followed by B
