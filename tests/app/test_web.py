"""The whole journey in headless Chromium against a real `spotforge serve`: sign up, brief,
storyboard, preview, personalize 2 x 2, compare, approve and purchase, download at a desktop
viewport, then the same owner's campaign on a phone. The downloaded spot must pass broadcast
QC. A screenshot of every step is saved (in $SPOTFORGE_SCREENSHOTS if set, else in the test's
folder)."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Page, expect, sync_playwright
from skimage import data

from app.services.text_rules import limit
from templates import qc
from templates.spec import all_templates

pytestmark = pytest.mark.long  # minutes of work: started first (tests/conftest.py)

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
MINUTE = 60_000


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def photo(tmp_path) -> Path:
    path = tmp_path / "espresso.jpg"
    Image.fromarray(data.coffee()).save(path, quality=92)
    return path


class Steps:
    """Saves a numbered full-page screenshot after each step."""

    def __init__(self, page: Page, folder: Path):
        self.page, self.folder, self.n = page, folder, 0
        folder.mkdir(parents=True, exist_ok=True)

    def shot(self, name: str) -> None:
        self.n += 1
        self.page.screenshot(path=self.folder / f"{self.n:02d}-{name}.png", full_page=True)


def sign_up(page: Page, url: str, business: str, email: str) -> None:
    page.goto(url)
    expect(page).to_have_url(re.compile("/login$"))
    page.get_by_role("link", name="Create an account for your business").click()
    page.get_by_label("Business name").fill(business)
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password (at least 10 characters)").fill("a-long-password")
    page.get_by_role("button", name="Create account").click()
    expect(page.locator("#who")).to_contain_text(business, timeout=MINUTE)


def fill_brief(page: Page, photo: Path) -> None:
    """A template from its thumbnail, a product photo, the copy."""
    page.get_by_label("Campaign name").fill("Espresso week")
    page.get_by_label("Objective").fill("Bring harbor commuters in")
    page.locator("#templates .thumbnail-item").nth(1).click()  # the product hero
    expect(page.locator("#template input")).to_have_value("Product hero")
    page.locator("#photos input[type=file]").set_input_files(photo)
    # Gradio sets a file's stem and extension apart; the cell is named by the whole name.
    expect(page.locator("#photos").get_by_role("cell", name=photo.name)).to_be_visible()
    page.get_by_label("Product", exact=True).fill("Espresso")
    page.get_by_label("Headline").fill("Fresh espresso, fast")
    page.get_by_label("Body").fill("Roasted on the harbor every morning.")
    page.get_by_label("Offer").fill("20 % off this week")
    page.get_by_label("Call to action").fill("Order online")
    page.get_by_label("Web address (shown with a QR code)").fill("harborcoffee.com")
    page.get_by_label("Tagline").fill("Good mornings start here")
    # A voice-over: its spoken length against the spot's, as it is typed.
    page.get_by_label("Voice-over (optional)").fill("Fresh espresso, roasted every morning.")
    expect(page.locator("#voiceover-note")).to_contain_text(
        re.compile(r"about \d+\.\d s spoken; a 15 s spot has room for about \d+ s")
    )


def tab(page: Page, name: str) -> None:
    """Open a step's tab; on a phone most tabs sit behind the "More tabs" menu."""
    shown, more = page.get_by_role("tab", name=name), page.get_by_role("button", name="More tabs")
    expect(shown.or_(more).first).to_be_visible()  # once the tab bar is laid out
    if shown.is_visible():
        shown.click()
        return
    more.click()
    page.locator(".overflow-dropdown").get_by_role("button", name=name).click()


@pytest.mark.browser
def test_brief_to_download(browser, app_server, photo, tmp_path):
    """The whole journey at a desk, then the same owner on a phone: each step's tab opens and
    shows the desk's work, and a quote is asked for from the phone. (Each render the phone
    would start is the desk's, run by the same handlers: doing them twice would only render
    them twice.)"""
    shots = Path(os.environ.get("SPOTFORGE_SCREENSHOTS", tmp_path / "screens"))
    context = browser.new_context(viewport=VIEWPORTS["desktop"], accept_downloads=True)
    page = context.new_page()
    steps = Steps(page, shots / "desktop")
    with app_server() as url:
        sign_up(page, url, "Harbor Coffee", "owner@harbor.test")
        steps.shot("signed-in")

        fill_brief(page, photo)
        # The templates shown are one length's, and the page says the other has its own.
        longer = sum(t.duration == 30 for t in all_templates())
        label = f"Templates for 15 s spots (click one): {longer} more at 30 s, under Length"
        expect(page.get_by_text(label)).to_be_visible()
        # A live count under each field with a limit, as it is typed.
        expect(page.locator(".counter", has_text=f"20 / {limit('headline')}")).to_be_visible()
        steps.shot("brief")
        page.get_by_role("button", name="Create storyboard").click()
        working_on = page.locator("#working-on")
        expect(working_on).to_contain_text("Working on Espresso week", timeout=MINUTE)
        expect(working_on).not_to_contain_text("#")

        # Storyboard: the scenes, and without a click backgrounds for the setting to choose
        # among.
        tab(page, "2 · Storyboard")
        expect(page.locator("#board .thumbnail-item")).to_have_count(4)
        expect(page.locator("#chosen")).to_contain_text("Until then the scenes show your brand")
        expect(page.locator("#candidates .thumbnail-item")).to_have_count(3, timeout=MINUTE)
        page.locator("#candidates .thumbnail-item").nth(2).click()
        expect(page.locator("#candidates")).to_contain_text("Option 3")
        expect(page.locator("#candidates")).not_to_contain_text("background 2")  # no seeds
        expect(page.locator("#chosen")).to_contain_text("Option 3 picked")
        page.get_by_role("button", name="Use this background").click()
        expect(page.get_by_text("Your spot now uses this background.")).to_be_visible(
            timeout=MINUTE
        )
        steps.shot("storyboard")

        # Preview: progress while it renders, then the video and its scenes.
        tab(page, "3 · Preview")
        page.get_by_role("button", name="Render preview").click()
        expect(page.locator("#status")).to_contain_text("Preview ready", timeout=3 * MINUTE)
        expect(page.locator("#preview-video video")).to_have_count(1)
        expect(page.get_by_role("button", name="Cancel", exact=True)).to_be_disabled()
        # Another background: the preview of the spot as it was is not shown as this one's.
        tab(page, "2 · Storyboard")
        page.locator("#candidates .thumbnail-item").nth(0).click()
        expect(page.locator("#chosen")).to_contain_text("Option 1 picked")
        page.get_by_role("button", name="Use this background").click()
        expect(page.locator("#chosen")).to_contain_text(
            "Your spot now uses this background.", timeout=MINUTE
        )
        tab(page, "3 · Preview")
        expect(page.locator("#status")).to_contain_text(
            "Your spot has changed since its last", timeout=MINUTE
        )
        expect(page.locator("#preview-video video")).to_have_count(0)
        page.get_by_role("button", name="Render preview").click()
        expect(page.locator("#status")).to_contain_text("Preview ready", timeout=3 * MINUTE)
        expect(page.locator("#preview-video video")).to_have_count(1)
        steps.shot("preview")

        # Personalize: 2 places x 2 audiences, the count before starting, frames as they come.
        tab(page, "4 · Personalize")
        for name in ("San Francisco Bay Area", "Manhattan", "Young runners", "Retirees"):
            page.get_by_label(name, exact=True).check()
        expect(page.locator("#estimate")).to_contain_text("4 variants", timeout=MINUTE)
        page.get_by_role("button", name="Make variants").click()
        expect(page.locator("#variants-status")).to_contain_text(
            "Done: 4 of 4 variants ready", timeout=4 * MINUTE
        )
        expect(page.locator("#variants .thumbnail-item")).to_have_count(4)
        expect(page.get_by_role("button", name="Stop")).to_be_disabled()
        expect(page.get_by_label("Run", exact=True)).to_have_count(0)  # its key is not shown
        steps.shot("variants")

        # Every variant checked; files damaged on disk are flagged, and made again on a click.
        for path in (tmp_path / "var" / "assets").rglob("*.png"):
            if Image.open(path).size == (1280, 720):  # a key frame
                path.write_bytes(path.read_bytes() + b"edited")
        page.get_by_role("button", name="Check variants").click()
        flagged = page.locator("#review")
        expect(flagged).to_contain_text(
            "5 of 5 versions (the spot as briefed and 4 variants) need a look", timeout=2 * MINUTE
        )
        expect(flagged).to_contain_text("Manhattan · Retirees: Files: Its key frame")
        page.get_by_role("button", name="Fix these").click()
        expect(flagged).to_contain_text("Made again: 5 of 5 now pass.", timeout=3 * MINUTE)
        expect(page.get_by_role("button", name="Fix these")).to_be_enabled()
        steps.shot("fixed")

        # Compare two of them side by side.
        tab(page, "5 · Compare")
        page.get_by_role("button", name="Compare").click()
        expect(page.get_by_text("Headline:").first).to_be_visible(timeout=MINUTE)
        expect(page.get_by_text(re.compile(r"seed|#\d"))).to_have_count(0)  # no internals
        for side in ("#picture-a", "#picture-b"):  # two variants made for places, not bases
            expect(page.locator(f"{side} img")).to_have_count(1)
        expect(page.locator("#variant-a input")).to_have_value("Manhattan · Young runners")
        page.get_by_role("button", name="Play both").click()
        expect(page.locator("#pair-status")).to_contain_text(
            "2 of 2 preview clips ready.", timeout=3 * MINUTE
        )
        for side in ("#clip-a", "#clip-b"):
            expect(page.locator(f"{side} video")).to_have_count(1)
        steps.shot("compare")

        # Approve and purchase one, then download its broadcast file.
        tab(page, "6 · Buy & download")
        buy = page.get_by_role("button", name="Approve and purchase")
        expect(buy).to_be_disabled()  # nothing quoted yet
        page.get_by_label(re.compile(r"Manhattan · Retirees")).check()
        page.get_by_role("button", name="Get a quote").click()
        expect(page.locator("#order-status")).to_contain_text("quoted", timeout=MINUTE)
        expect(page.locator("#order-status")).to_contain_text("USD 49.00")
        page.get_by_role("button", name="Approve and purchase: USD 49.00").click()  # its price
        expect(page.locator("#order-status")).to_contain_text("delivered", timeout=5 * MINUTE)
        for done in ("Approve and purchase", "Render again", "Cancel order"):
            expect(page.get_by_role("button", name=done)).to_be_disabled()
        steps.shot("delivered")
        link = page.locator("#downloads").get_by_role("link", name=re.compile(r"16x9-15s\.mp4$"))
        with page.expect_download(timeout=MINUTE) as download:
            link.click(modifiers=["Alt"])  # Alt: download rather than navigate
        saved = tmp_path / "final.mp4"
        download.value.save_as(saved)
        report = qc.check(saved, qc.BROADCAST)
        assert report.passed, report.failures
        # Its QC report is a page to read, which links the file a broadcaster's system takes.
        href = (
            page.locator("#downloads").get_by_role("link", name="QC report").get_attribute("href")
        )
        reading = context.new_page()
        reading.goto(url + href)
        expect(reading.get_by_role("heading", level=1)).to_have_text(
            "Manhattan · Retirees · 16:9 final"
        )
        expect(
            reading.get_by_text(re.compile(r"Passes the broadcast.* checks pass"))
        ).to_be_visible()
        expect(reading.get_by_role("cell", name="FAIL", exact=True)).to_have_count(0)
        reading.close()

        # The library shows the campaign's lineage: the base, and the variants under it.
        tab(page, "Library")
        page.get_by_role("button", name="Refresh").click()
        expect(page.locator("#lineage")).to_contain_text("Manhattan · Retirees", timeout=MINUTE)
        expect(page.locator("#campaigns")).not_to_contain_text("#")  # names, not ids
        page.get_by_label("Variant to render again").click()
        expect(page.get_by_role("option", name="Manhattan · Retirees").first).to_be_visible()
        steps.shot("library")
        on_a_phone(browser, context.storage_state(), url, shots / "phone")
    context.close()


def on_a_phone(browser, signed_in: dict, url: str, shots: Path) -> None:
    """The owner of the desk's journey, signed in on a phone: every step's tab (most behind
    "More tabs") opens on the campaign and shows what was made; a quote is asked for here."""
    context = browser.new_context(viewport=VIEWPORTS["phone"], storage_state=signed_in)
    page = context.new_page()
    steps = Steps(page, shots)
    page.goto(url)
    expect(page.locator("#who")).to_contain_text("Harbor Coffee", timeout=MINUTE)
    expect(page.locator("#working-on")).to_contain_text("Espresso week", timeout=MINUTE)
    # The brief shows the words the spot was made from, not a blank form.
    expect(page.get_by_label("Headline")).to_have_value("Fresh espresso, fast")
    expect(page.get_by_label("Campaign name")).to_have_value("Espresso week")
    expect(page.get_by_label("Objective")).to_have_value("Bring harbor commuters in")
    expect(page.locator("#template input")).to_have_value("Product hero")
    steps.shot("brief")
    tab(page, "2 · Storyboard")
    expect(page.locator("#board .thumbnail-item")).to_have_count(4, timeout=MINUTE)
    expect(page.get_by_role("button", name="Show backgrounds")).to_be_visible()
    steps.shot("storyboard")
    tab(page, "3 · Preview")
    expect(page.get_by_role("button", name="Render preview")).to_be_visible()
    # (Each is read by a handler, which a loaded machine may take seconds to run.)
    expect(page.locator("#status")).to_contain_text("Preview ready", timeout=MINUTE)  # the desk's
    expect(page.locator("#preview-video video")).to_have_count(1, timeout=MINUTE)
    tab(page, "4 · Personalize")
    expect(page.locator("#variants .thumbnail-item").first).to_be_visible(timeout=MINUTE)
    # The last run's places and audiences are ticked again; the owner narrows them down.
    estimate = page.locator("#estimate")
    expect(estimate).to_contain_text("4 variants (2 places × 2 audiences)", timeout=MINUTE)
    for name in ("San Francisco Bay Area", "Young runners"):
        page.get_by_label(name, exact=True).uncheck()
    expect(estimate).to_contain_text("1 variant (1 place × 1 audience)", timeout=MINUTE)
    expect(estimate).to_contain_text("(1 already made)")
    steps.shot("personalize")
    tab(page, "5 · Compare")
    page.get_by_role("button", name="Compare").click()
    expect(page.get_by_text("Headline:").first).to_be_visible(timeout=MINUTE)
    steps.shot("compare")
    # Back is the step before, as on any site, not out of the studio; Forward comes back.
    page.go_back()
    expect(page.get_by_role("tab", name="4 · Personalize", selected=True)).to_be_visible()
    expect(page.locator("#estimate")).to_contain_text("1 variant (1 place × 1 audience)")
    page.go_forward()
    expect(page.get_by_role("tab", name="5 · Compare", selected=True)).to_be_visible()
    tab(page, "6 · Buy & download")
    # The desk's order is there, delivered, with its files.
    expect(page.locator("#order-status")).to_contain_text("delivered", timeout=MINUTE)
    expect(
        page.locator("#downloads").get_by_role("link", name=re.compile(r"16x9-15s\.mp4$"))
    ).to_be_visible()
    steps.shot("bought")
    page.get_by_label("San Francisco Bay Area · Young runners", exact=True).check()
    page.get_by_role("button", name="Get a quote").click()
    expect(page.locator("#order-status")).to_contain_text("quoted", timeout=MINUTE)
    expect(page.locator("#order-status")).to_contain_text("USD 49.00")
    expect(page.get_by_role("button", name="Approve and purchase")).to_be_enabled()
    steps.shot("quoted")
    tab(page, "Library")
    page.get_by_role("button", name="Refresh").click()
    expect(page.locator("#lineage")).to_contain_text("Manhattan · Retirees", timeout=MINUTE)
    steps.shot("library")
    context.close()


@pytest.mark.browser
def test_mistakes_show_a_clear_message(browser, app_server, photo, tmp_path):
    page = browser.new_page()
    bogus = tmp_path / "notes.png"
    bogus.write_text("this is not a picture")
    with app_server() as url:
        # What a business types is shown as text, never made into an element.
        sign_up(page, url, "Harbor <img src=x onerror=window.hacked=1> Bakery", "owner@bakery.test")
        expect(page.locator("#who")).to_contain_text("<img src=x onerror=window.hacked=1>")
        assert page.locator("#who img").count() == 0
        assert page.evaluate("window.hacked") is None
        page.get_by_role("button", name="Create storyboard").click()
        expect(page.get_by_text("Give the campaign a name.")).to_be_visible()
        page.get_by_label("Campaign name").fill("Pies")
        page.get_by_role("button", name="Create storyboard").click()
        expect(page.get_by_text("add a photo of your product")).to_be_visible()
        page.locator("#photos input[type=file]").set_input_files(bogus)
        page.get_by_label("Headline").fill("A headline far too long " * 6)
        # Words the template has no room for are said as they are typed, under the fields.
        expect(page.locator("#copy-note")).to_contain_text(
            re.compile(r"Headline: \d+ characters, and Product hero has room for 42 on screen")
        )
        page.get_by_role("button", name="Create storyboard").click()
        problem = re.compile("too long|does not fit|not recognised|corrupt")
        expect(page.get_by_text(problem)).to_be_visible()
        expect(page.get_by_text(re.compile("Traceback"))).to_have_count(0)
        # What the model makes of a setting is said as it is typed: the built-in place it
        # names, or the words it does not know; the suggestions are the places it draws.
        setting = page.get_by_label("Where it is set", exact=True)
        setting.fill("Mission Peak in Fremont at sunset")
        expect(page.locator("#setting-note")).to_contain_text(
            "Drawn as the built-in place San Francisco Bay Area (Mission Peak above the bay) at "
            "golden hour, for 'Mission Peak'"
        )
        setting.fill("a cosy bakery by the harbor")
        expect(page.locator("#setting-note")).to_contain_text(
            "The picture model (landmark-dit) does not know 'a', 'cosy', 'bakery', 'harbor'"
        )
        page.get_by_text("Miami at night", exact=True).click()
        expect(setting).to_have_value("Miami at night")
        expect(page.locator("#setting-note")).to_contain_text("Drawn as the built-in place Miami")
        page.screenshot(path=tmp_path / "setting.png", full_page=True)

        # Their own pictures: a file that is not one is refused in a sentence; a photo added
        # to the library is offered as where the spot is set, and the storyboard shows it.
        tab(page, "Library")
        page.locator("#picture-file input[type=file]").set_input_files(bogus)
        page.get_by_role("button", name="Add to your pictures").click()
        # (The brief's refusal may still be up: it names the file it refused.)
        expect(
            page.get_by_text(re.compile("^(This file type is not recognised|.*corrupt)"))
        ).to_be_visible()
        page.locator("#picture-file").get_by_role("button", name="Clear").click()
        storefront = tmp_path / "our-storefront.png"
        Image.new("RGB", (1600, 900), (30, 140, 90)).save(storefront)
        page.locator("#picture-file input[type=file]").set_input_files(storefront)
        page.get_by_role("button", name="Add to your pictures").click()
        expect(page.locator("#pictures-note")).to_contain_text("Added our-storefront.png")
        expect(page.locator("#pictures")).to_contain_text("our-storefront.png · photo, 1600×900")
        # A name typed wrong at sign-up is put right (as text: its markup stays letters).
        name = page.get_by_label("Business name (on the end card of every new spot)")
        expect(name).to_have_value("Harbor <img src=x onerror=window.hacked=1> Bakery")
        name.fill("   ")
        page.get_by_role("button", name="Save the name").click()
        expect(page.get_by_text("Give your business a name.")).to_be_visible()
        name.fill("Harbor <b>Bakery</b> & Pies")
        page.get_by_role("button", name="Save the name").click()
        expect(page.locator("#who")).to_contain_text("Harbor <b>Bakery</b> & Pies")
        expect(page.locator("#name-note")).to_contain_text("end on Harbor <b>Bakery</b> & Pies")
        assert page.locator("#who b, #name-note b").count() == 0
        page.reload()  # a fresh brief, its choices of where it is set read again
        fill_brief(page, photo)
        page.locator("#where input").click()
        page.get_by_role("option", name="our-storefront.png").click()
        # A refused brief keeps its photo: corrected, the same upload makes the spot.
        page.get_by_label("Headline").fill("")
        page.get_by_role("button", name="Create storyboard").click()
        expect(page.get_by_text("headline: fill it in")).to_be_visible()
        page.get_by_label("Headline").fill("Fresh pies, fast")
        expect(page.locator("#copy-note")).to_have_text("")
        page.get_by_role("button", name="Create storyboard").click()
        expect(page.locator("#working-on")).to_contain_text("Working on Espresso", timeout=MINUTE)
        tab(page, "2 · Storyboard")
        first = page.locator("#board .thumbnail-item img").first
        expect(first).to_be_visible(timeout=MINUTE)
        # A gallery shows its <img> before the picture has arrived: wait for the pixels.
        page.wait_for_function(
            "img => img.complete && img.naturalWidth > 0", arg=first.element_handle()
        )
        shot = Image.open(io.BytesIO(first.screenshot())).convert("RGB")
        r, g, b = np.asarray(shot, dtype=float).reshape(-1, 3).mean(axis=0)
        assert g > r + 40 and g > b + 20, (r, g, b)  # the storefront's green, not a generated sky
        # A scene clicked is the one the scene buttons act on.
        scene = page.get_by_label("Scene (or click it above)")
        expect(scene).to_have_value("1")
        page.locator("#board .thumbnail-item").nth(2).click()
        expect(scene).to_have_value("3")
        page.goto(url + "/login")
        page.get_by_label("Email").fill("owner@bakery.test")
        page.get_by_label("Password").fill("not the password")
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("alert")).to_contain_text("Wrong email or password.")


@pytest.mark.browser
def test_a_missing_model_and_a_full_queue_are_explained(browser, app_server, photo):
    page = browser.new_page(viewport=VIEWPORTS["desktop"])
    with app_server(SPOTFORGE_MODEL="sd-turbo") as url:  # a hub model never pulled here
        sign_up(page, url, "Harbor Coffee", "owner@harbor.test")
        fill_brief(page, photo)
        page.get_by_role("button", name="Create storyboard").click()
        expect(page.locator("#working-on")).to_contain_text("Working on", timeout=MINUTE)
        tab(page, "2 · Storyboard")
        page.get_by_role("button", name="Show backgrounds").click()
        expect(page.get_by_text("is not on this machine")).to_be_visible(timeout=MINUTE)
        expect(page.get_by_text("spotforge models pull sd-turbo").first).to_be_visible()

    with app_server(SPOTFORGE_MAX_WAITING_JOBS="3") as url:  # same data, a smaller queue
        page.goto(url)  # still signed in
        expect(page.locator("#who")).to_contain_text("Harbor Coffee", timeout=MINUTE)
        # A returning owner: the last spot is open with its brief's words, the brand kit's in
        # the brand fields.
        expect(page.locator("#working-on")).to_contain_text("Espresso week", timeout=MINUTE)
        expect(page.get_by_label("Offer")).to_have_value("20 % off this week")
        web = page.get_by_label("Web address (shown with a QR code)")
        expect(web).to_have_value("harborcoffee.com")
        tab(page, "Library")
        page.get_by_role("button", name="Open this campaign").click()
        expect(page.get_by_text("Working on Espresso week.")).to_be_visible(timeout=MINUTE)
        tab(page, "4 · Personalize")
        for name in ("Miami", "Denver", "Young runners", "Retirees"):
            page.get_by_label(name, exact=True).check()
        page.get_by_role("button", name="Make variants").click()
        expect(page.get_by_text("would pass the limit of 3")).to_be_visible(timeout=MINUTE)
        expect(page.get_by_text(re.compile("Traceback"))).to_have_count(0)
        # The brief sent again, renamed, with no photo added: a new spot with the open one's.
        tab(page, "1 · Brief")
        note = page.locator("#photos-note")
        expect(note).to_contain_text("Espresso week (the campaign open now) keeps its product")
        page.get_by_label("Campaign name").fill("Espresso week, again")
        page.get_by_role("button", name="Create storyboard").click()
        expect(page.locator("#working-on")).to_contain_text(
            "Working on Espresso week, again", timeout=MINUTE
        )
        expect(note).to_contain_text("Espresso week, again (the campaign open now) keeps")
