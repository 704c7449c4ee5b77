"""Targets on the trend page in Chromium at 1400 and 400 px (docs/targets.md): tpu gains a test a
day toward a target it will meet; neuron is flat, "no progress", at risk. The chart marks each
target with a star and the forecast with a circle, and draws none for no progress; the targets
table reads the figures counted here from the uploads. A maintainer sets a target with the
page's form, changes it and removes it with its row's buttons. Screenshots:
``targets-<width>.png`` and ``target-form-<width>.png``."""

import datetime

import pytest
from django.utils import timezone
from playwright.sync_api import expect
from rest_framework.test import APIClient

from parity.models import Target
from parity.services.projects import project_create, upload_token_create
from parity.services.targets import TargetRequest, target_create
from tests.browser.conftest import SCREENSHOTS, log_in, no_chromium
from tests.browser.layout import page_overflow
from tests.parity.conftest import run_xml
from tests.uploads import post_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "targets-trend"
TESTS = [f"test/t.py::TestT::test_{n:02}" for n in range(20)]
TODAY = timezone.now().date()
DAYS = [str(TODAY - datetime.timedelta(days=n)) for n in range(9, -1, -1)]  # ten days
FORECAST = TODAY + datetime.timedelta(days=4)  # tpu: 14 of 18 today, one more a day


def _cases(passing: int) -> dict:
    return {t: "passed" if i < passing else ("failed", "boom") for i, t in enumerate(TESTS)}


@pytest.fixture(scope="module")
def targeted(site, django_db_blocker):
    with django_db_blocker.unblock():
        project = project_create(
            slug=SLUG, backends=["cpu", "tpu", "neuron"], reference="cpu", visibility="public"
        )
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")
        for n, day in enumerate(DAYS):
            for backend, cases, time in (
                ("cpu", dict.fromkeys(TESTS, "passed"), "00:10"),
                ("tpu", _cases(5 + n), "00:20"),
                ("neuron", _cases(8), "00:30"),
            ):
                reply = post_upload(
                    api,
                    (f"{backend}.xml", run_xml(cases)),
                    project=SLUG,
                    backend=backend,
                    commit=f"{day.replace('-', '')}{'0' * 32}",
                    run=f"{day}-{backend}",
                    timestamp=f"{day}T{time}:00Z",
                    complete="true",
                )
                assert reply.status_code == 202, reply.content
        for backend, score, days in (("tpu", 0.9, 20), ("neuron", 0.6, 40)):
            target_create(
                project=project,
                request=TargetRequest(
                    backend=backend, score=score, due=TODAY + datetime.timedelta(days=days)
                ),
            )
    return project


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_trend_marks_each_target_and_its_honest_forecast(page, targeted):
    page.goto(f"/p/{SLUG}/trend/")
    chart = page.locator("#trend-chart")
    # 2 lines, 2 targets, 1 forecast (neuron has none: no progress), and the legend's entry of
    # each kind of mark.
    expect(chart.locator(".scatterlayer .trace")).to_have_count(7)
    # Each kind once, however many targets: the hover names the backend.
    expect(chart.locator(".legendtext")).to_have_text(["neuron", "tpu", "target", "forecast"])
    rows = page.locator("#trend-targets tbody tr")
    expect(rows).to_have_count(2)
    neuron, tpu = rows.nth(0), rows.nth(1)
    expect(tpu.locator(".target-forecast")).to_have_text(f"forecast {FORECAST} (1.0 tests a day)")
    expect(tpu).to_contain_text("on track")
    expect(tpu.locator('[data-label="Published"]')).to_have_text("70 %")
    expect(neuron.locator(".target-forecast")).to_contain_text("no progress")
    expect(neuron).to_contain_text("at risk")
    assert page_overflow(page) <= 0
    width = page.viewport_size["width"]
    box = chart.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"targets-{width}.png", full_page=True)


def test_the_demo_sets_a_target_on_each_backend_but_the_reference(page):
    page.goto("/p/pytorch-xla/trend/")
    rows = page.locator("#trend-targets tbody tr")
    expect(rows).to_have_count(3)
    assert [rows.nth(i).get_attribute("data-backend") for i in range(3)] == [
        "gpu",
        "neuron",
        "tpu",
    ]
    legend = page.locator("#trend-chart .legendtext")
    expect(legend.filter(has_text="target")).to_have_count(1)  # three targets, one entry
    expect(page.locator('.tabs a[aria-current="page"]')).to_have_text("Trend")


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_a_maintainer_sets_a_target_with_the_form_and_removes_it(page, site, targeted):
    log_in(page, site)
    page.goto(f"/p/{SLUG}/trend/?backend=tpu")
    form = page.locator("#target-form")
    expect(form.locator("select[name=backend]")).to_have_value("tpu")
    form.locator("input[name=score]").fill("90")
    form.locator("input[name=due]").fill(str(TODAY + datetime.timedelta(days=10)))
    form.locator("input[name=note]").fill("from the form")
    form.locator("button", has_text="Set target").click()

    made = Target.objects.get(project=targeted, note="from the form")
    row = page.locator(f'#trend-targets tr[data-target="{made.pk}"]')
    expect(row).to_contain_text(f"90 % by {TODAY + datetime.timedelta(days=10)}")
    expect(row.locator(".target-forecast")).to_have_text(f"forecast {FORECAST} (1.0 tests a day)")
    expect(page.locator(".messages")).to_contain_text("Target set")
    assert page_overflow(page) <= 0
    width = page.viewport_size["width"]
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"target-form-{width}.png", full_page=True)

    row.locator(".target-edit summary").click()
    row.locator(f"input[name=t{made.pk}-score]").fill("95")
    assert page_overflow(page) <= 0  # the open edit form fits a phone too
    row.locator(".target-edit button", has_text="Save").click()
    expect(row).to_contain_text(f"95 % by {TODAY + datetime.timedelta(days=10)}")
    expect(page.locator(".messages")).to_contain_text("Target changed")

    row.locator("button", has_text="Remove").click()
    expect(page.locator(f'#trend-targets tr[data-target="{made.pk}"]')).to_have_count(0)
    expect(page.locator(".messages")).to_contain_text("Target removed")
    assert not Target.objects.filter(pk=made.pk).exists()
