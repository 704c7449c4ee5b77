"""The project's webhooks page in Chromium, as a maintainer uses it: add an endpoint (a local
receiver), copy its secret from the one answer that shows it, send a test event and see it
delivered, the secret gone on reload. Screenshots at 1400 px and 400 px (``<test>-400px.png``);
nothing scrolls sideways on a phone."""

import re

import pytest
from playwright.sync_api import expect

from parity.models import WebhookEndpoint
from tests.browser.conftest import SCREENSHOTS, log_in, no_chromium
from tests.browser.layout import page_overflow
from tests.browser.test_exemptions import narrow_screenshot
from tests.webhook_receiver import WebhookReceiver

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
P = "/p/pytorch-xla"


def test_a_maintainer_adds_an_endpoint_sees_its_secret_once_and_pings_it(page, site, request):
    log_in(page, site)
    with WebhookReceiver() as receiver:
        page.goto(f"{P}/webhooks/")
        expect(page.locator("h1")).to_contain_text("Webhooks")
        form = page.locator("#new-endpoint")
        form.locator("input[name=url]").fill(receiver.url)
        form.locator("input[name=events][value=untracked_gaps]").check()
        form.locator("button", has_text="Save endpoint").click()

        secret = page.locator("#secret-value").inner_text()
        [endpoint] = [e for e in WebhookEndpoint.objects.all() if e.url == receiver.url]
        assert secret == endpoint.secret and len(secret) >= 40
        receiver.secret = secret
        narrow_screenshot(page, request)

        card = page.locator(f"#endpoint-{endpoint.pk}")
        card.locator("button", has_text="Send a test event").click()
        [received] = receiver.wait_for(1, seconds=20)
        assert received.verified, received.why
        assert received.body["event"] == "ping"

        page.goto(f"{P}/webhooks/")
        row = page.locator(f"#endpoint-{endpoint.pk} tr[data-status=delivered]")
        expect(row).to_have_count(1)
        expect(row).to_contain_text("ping")
        assert secret not in page.content()
        expect(page.locator("#secret-once")).to_have_count(0)
        shot = SCREENSHOTS / f"{request.node.name}-delivered"
        page.screenshot(path=f"{shot}.png", full_page=True)
        page.set_viewport_size({"width": 400, "height": 800})
        assert page_overflow(page) <= 0, "scrolls sideways at 400 px"
        page.screenshot(path=f"{shot}-400px.png", full_page=True)
        page.set_viewport_size({"width": 1400, "height": 900})

        card = page.locator(f"#endpoint-{endpoint.pk}")
        card.locator("summary", has_text="Remove…").click()
        card.locator("button.remove").click()
        expect(page.locator(".messages")).to_contain_text("removed")
        expect(page.locator(f"#endpoint-{endpoint.pk}")).to_have_count(0)


def test_a_refused_url_stays_in_the_open_form_with_why(page, site, request):
    log_in(page, site)
    page.goto(f"{P}/webhooks/")
    form = page.locator("#new-endpoint")
    form.locator("input[name=url]").fill("http://-bad-.example/")
    form.locator("button", has_text="Save endpoint").click()

    expect(page.locator("#new-endpoint")).to_have_attribute("open", re.compile(".*"))
    expect(page.locator("#new-endpoint .errorlist")).to_contain_text("valid URL")
    assert not [e for e in WebhookEndpoint.objects.all() if "bad" in e.url]
    narrow_screenshot(page, request)
