"""The first page, driven in headless Chromium and through the API, against a real server."""

from __future__ import annotations

import re

import pytest
from gradio_client import Client
from playwright.sync_api import Page, expect, sync_playwright

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def _create_business(page: Page, name: str) -> None:
    page.get_by_label("New business").fill(name)
    page.get_by_role("button", name="Create business").click()
    expect(page.get_by_label("Business", exact=True)).to_have_value(name)


@pytest.mark.browser
def test_create_business_and_campaign_survive_a_restart(browser, app_server, tmp_path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    with app_server() as url:
        page.goto(url)
        _create_business(page, "Trailhead Running Co.")
        page.get_by_label("Campaign name").fill("Spring trail sale")
        page.get_by_label("Objective").fill("Bring Bay Area runners to the store")
        page.get_by_role("button", name="Create campaign").click()
        table = page.locator("#campaigns")
        expect(table).to_contain_text("Spring trail sale")
        expect(table).to_contain_text("Bring Bay Area runners to the store")
        expect(page.get_by_label("Campaign name")).to_have_value("")
        page.screenshot(path=tmp_path / "first-page.png", full_page=True)

    with app_server() as url:  # a new process on the same data folder
        page.goto(url)
        expect(page.get_by_label("Business", exact=True)).to_have_value("Trailhead Running Co.")
        expect(page.locator("#campaigns")).to_contain_text("Spring trail sale")


@pytest.mark.browser
def test_mistakes_show_a_clear_message(browser, app_server):
    page = browser.new_page()
    with app_server() as url:
        page.goto(url)
        page.get_by_role("button", name="Create campaign").click()
        expect(page.get_by_text("Create or choose a business first.")).to_be_visible()
        _create_business(page, "Harbor Bakery")
        page.get_by_role("button", name="Create campaign").click()
        expect(page.get_by_text("a campaign needs a name")).to_be_visible()
        expect(page.get_by_text(re.compile("Traceback"))).to_have_count(0)


def test_every_action_is_an_api_endpoint(app_server):
    with app_server() as url:
        client = Client(url, verbose=False)
        business, _ = client.predict("Harbor Bakery", api_name="/create_business")
        business_id = business["value"] if isinstance(business, dict) else business
        rows, *_ = client.predict(
            business_id, "Holiday pies", "Pre-orders", api_name="/create_campaign"
        )
        assert [r[:3] for r in rows["data"]] == [["Holiday pies", "Pre-orders", "draft"]]
        listed = client.predict(business_id, api_name="/list_campaigns")
        assert [r[0] for r in listed["data"]] == ["Holiday pies"]
        with pytest.raises(Exception, match="999 is not in the list of choices"):
            client.predict(999, api_name="/list_campaigns")
