"""A page follows long work without holding the server: the click that starts a render returns
at once, and where the render stands comes by the page's timer, one short read at a time.

The app is served from this process with its worker held back until the test lets it go, so a
start that "returns at once" is not a matter of timing: the render has not even begun when the
answer comes back (a handler that waited for it would never answer)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import uvicorn
from PIL import Image
from playwright.sync_api import expect, sync_playwright
from skimage import data

from app.services import AppContext
from app.services.context import open_engine
from app.services.worker import Worker
from app.ui import server, web
from tests.app.conftest import free_port
from tests.app.test_api import PASSWORD, client, token, until
from tests.app.test_web import CHROMIUM_ARGS, MINUTE, VIEWPORTS, fill_brief, sign_up, tab

WAITING = "Your preview is waiting: next in line."


@pytest.fixture
def photo(tmp_path) -> Path:
    path = tmp_path / "espresso.jpg"
    Image.fromarray(data.coffee()).save(path, quality=92)
    return path


@pytest.fixture
def held_app(ctx: AppContext, tmp_path, monkeypatch) -> Iterator[tuple[str, Callable[[], None]]]:
    """(url, release): the app on a free port, its job queue worked by no one until `release()`
    starts a worker."""
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))  # the app sets its own; restored after
    app = server.create_app(ctx, worker=False)
    port = free_port()
    served = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=served.run, name="held-app", daemon=True)
    thread.start()
    deadline = time.monotonic() + 90
    while not served.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the app did not start"
        time.sleep(0.1)
    engine = open_engine(ctx.settings)
    worker = Worker(ctx, engine)
    released = threading.Event()

    def release() -> None:
        worker.start()
        released.set()

    try:
        yield f"http://127.0.0.1:{port}", release
    finally:
        served.should_exit = True
        thread.join(60)
        if released.is_set():
            worker.stop(timeout=60)
        engine.close()


@pytest.mark.browser
def test_a_render_is_followed_by_the_page_s_timer_not_by_a_waiting_handler(held_app, photo):
    url, release = held_app
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORTS["desktop"])
        sign_up(page, url, "Harbor Coffee", "owner@harbor.test")
        fill_brief(page, photo)
        page.get_by_role("button", name="Create storyboard").click()
        expect(page.locator("#working-on")).to_contain_text("Working on", timeout=MINUTE)

        # The click answers while no worker has taken the render.
        tab(page, "3 · Preview")
        status = page.locator("#status")
        page.get_by_role("button", name="Render preview").click()
        expect(status).to_contain_text(WAITING, timeout=MINUTE)
        # Cancel withdraws it and the page stops following; asking again queues it again.
        page.get_by_role("button", name="Cancel").click()
        expect(status).to_contain_text("Cancelled.")
        page.get_by_role("button", name="Render preview").click()
        expect(status).to_contain_text(WAITING, timeout=MINUTE)

        # More sessions than the server has worker slots start the same render, one after
        # another: each start answers while the render is still waiting, so none keeps a slot.
        signed_in = token(url, "owner@harbor.test", PASSWORD)
        for _ in range(web.WORKERS + 1):
            api = client(url, signed_in)
            started = api.submit(1, api_name="/render_preview").result(timeout=MINUTE / 1000)
            message, video, _scenes, _job, follow = started
            assert message == WAITING and video is None and follow["live"]
            assert api.predict(follow, api_name="/preview_progress")[0] == WAITING

        # A worker takes it: the page learns by its timer, with no further click, and so does a
        # script reading its own session's progress.
        release()
        expect(status).to_contain_text("Preview ready", timeout=5 * MINUTE)
        expect(page.locator("#preview-video video")).to_have_count(1)
        ready = until(api, "/preview_progress", lambda m: "Preview ready" in m, follow)
        _, video, scenes, _ = ready
        assert Path(video).stat().st_size > 0 and len(scenes) == 4
        browser.close()
