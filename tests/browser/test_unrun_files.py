"""A backend whose CI crashed, timed out or lost a shard, in Chromium at a desktop and a phone's
width: the heatmap labels each such file by what happened (not "missing"), and the gaps list
says how each file's process ended, with a link to the CI run."""

import json

import pytest
from playwright.sync_api import expect
from rest_framework.test import APIClient

from parity.models import Run
from parity.services.projects import project_create, upload_token_create
from tests.browser.conftest import SCREENSHOTS, no_chromium
from tests.browser.layout import page_overflow
from tests.junit_builder import Case, junit_xml
from tests.uploads import post_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "crashes"
CI_URL = "https://ci.example.org/runs/42"
FILES = {
    "test/test_ok.py": "ran",
    "test/test_segv.py": "crashed",
    "test/test_slow.py": "timed_out",
    "test/test_empty.py": "empty",
    "test/test_lost.py": "not_run",
}
MANIFEST = {
    "files": [
        {"file": "test/test_ok.py", "exit_code": 0, "report": True, "tests": 3},
        {"file": "test/test_segv.py", "signal": "SIGSEGV", "duration": 4.2},
        {"file": "test/test_slow.py", "timed_out": True, "duration": 1800.0},
        {"file": "test/test_empty.py", "exit_code": 5, "report": True, "tests": 0},
        {"file": "test/test_lost.py", "started": False},
    ]
}


@pytest.fixture(scope="module")
def crashes(site, django_db_blocker):
    """A project beside the demo's: cpu ran three tests of every file, tpu ran test_ok.py."""
    cases = [
        Case(f"Test{n}", f"test_{i}", file=file) for n, file in enumerate(FILES) for i in range(3)
    ]
    with django_db_blocker.unblock():
        project = project_create(
            slug=SLUG, backends=["cpu", "tpu"], reference="cpu", visibility="public"
        )
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")
        cpu = post_upload(api, ("cpu.xml", junit_xml(*cases)), project=SLUG, complete="true")
        tpu = post_upload(
            api,
            ("tpu.xml", junit_xml(*cases[:3])),
            project=SLUG,
            backend="tpu",
            ci_url=CI_URL,
            run_manifest=json.dumps(MANIFEST),
            complete="true",
        )
        assert (cpu.status_code, tpu.status_code) == (202, 202), tpu.content
    return project


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_heatmap_labels_files_by_what_happened_to_them(page, crashes):
    page.goto(f"/p/{SLUG}/?sort=name")
    cells = page.locator('#heatmap td[data-backend="tpu"]')
    expect(cells).to_have_text(
        ["no tests · 3", "not started · 3", "3/3", "crashed · 3", "timed out · 3"]
    )
    title = page.locator('#heatmap td[data-run-state="crashed"] a').get_attribute("title")
    assert title.startswith("tpu · test/test_segv.py: 0 passed, 0 failed, 0 error, 0 skipped")
    assert title.endswith(" · the file crashed (SIGSEGV)")


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_gaps_list_says_how_each_file_ended(page, crashes):
    page.goto(f"/p/{SLUG}/gaps/?open=1&backend=tpu")
    rows = page.locator("table.gaps tbody tr")
    expect(rows).to_have_count(12)
    crashed = rows.filter(has_text="test_segv.py").first
    expect(crashed.locator(".state")).to_have_text("crashed")
    expect(crashed.locator(".unrun")).to_have_text("the file crashed (SIGSEGV) · CI run")
    expect(crashed.locator(".unrun a")).to_have_attribute("href", CI_URL)
    lost = rows.filter(has_text="test_lost.py").first
    expect(lost.locator(".unrun")).to_contain_text("the file never started")


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_run_page_shows_run_health_apart_from_the_verdict(page, crashes):
    """tpu's first run lost four files to infrastructure and failed no test: the verdict is ok
    (test health) and the run unhealthy, each file to rerun with how it ended."""
    run = Run.objects.get(project=crashes, backend__name="tpu")
    page.goto(f"/p/{SLUG}/runs/{run.pk}/")

    expect(page.locator("#verdict h2 [data-ok]")).to_have_text("ok")
    expect(page.locator("#verdict h2 a[data-healthy=false]")).to_have_text("run unhealthy")
    expect(page.locator("#verdict-counts")).to_contain_text("12 tests of files lost to")
    health = page.locator("#run-health")
    expect(health.locator("h2 [data-healthy]")).to_have_text("unhealthy")
    expect(health).to_contain_text("Infrastructure lost 4 files")
    rows = health.locator("table.rerun-files tbody tr")
    states = rows.evaluate_all("rs => rs.map(r => [r.dataset.file, r.dataset.state])")
    assert states == [
        ["test/test_empty.py", "empty"],
        ["test/test_lost.py", "not_run"],
        ["test/test_segv.py", "crashed"],
        ["test/test_slow.py", "timed_out"],
    ]
    expect(rows.filter(has_text="test_segv.py")).to_contain_text("SIGSEGV")
    expect(health.locator(f'a[href="{CI_URL}"]')).to_have_text("CI run")
    # The untracked gaps it opens leave the lost files' tests out: none of its own.
    expect(page.locator("#opened-gaps tbody tr")).to_have_count(0)
    width = "narrow" if page.viewport_size["width"] < 600 else "desktop"
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"run_health[{width}].png", full_page=True)
    overflow = page_overflow(page)
    assert overflow <= 0, f"the run page scrolls sideways by {overflow}px"
