"""A CI upload's run page and the test search, in Chromium, on the demo: a pull request's run
sent by the CI client (``parity_ci.py``) shows on its page exactly the gaps its verdict opened,
the runs list links it, and the nav's search box finds a test by its runner's name. Screenshots
at 1400 and 400 px."""

import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from parity.models import CurrentOutcome, Outcome, Project, TestCase
from parity.pure.normalize.runner_ids import runner_identity
from parity.services.projects import upload_token_create
from tests.browser.conftest import SCREENSHOTS, no_chromium
from tests.browser.layout import page_overflow
from tests.junit_builder import Case, junit_xml

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "pytorch-xla"
CLIENTS = Path(__file__).resolve().parents[2] / "parity" / "clients"
# PyTorch's device-generic test as XLA's pytest run names it; ingest files it under its
# canonical ID (the device taken out of class and name).
RUNNER_NAME = "test/test_ops.py::TestOpsXLA::test_add_xla_float32"
SKIPPED, FAILED = 3, 1  # tests tpu passes now that the pull request's run breaks


def passing_on_both() -> list[TestCase]:
    """Tests cpu (the reference) and tpu pass in their current runs, whose canonical IDs read
    back as themselves (so a report naming them lands on them)."""
    project = Project.objects.get(slug=SLUG)
    passing = CurrentOutcome.objects.filter(project=project, outcome=Outcome.PASSED)
    tpu = set(passing.filter(backend__name="tpu").values_list("test_id", flat=True))
    cpu = passing.filter(backend__name="cpu", test_id__in=tpu).values_list("test_id", flat=True)
    tests = TestCase.objects.filter(pk__in=list(cpu)).order_by("key")
    rules = project.normalization()
    return [t for t in tests if runner_identity(t.key, rules).key == t.key][:20]


@pytest.fixture(scope="module")
def ci_run(site, django_db_blocker, tmp_path_factory) -> dict:
    """A pull request's tpu run, sent as CI sends it and not complete (more shards may come):
    20 tests tpu passes, of which it skips 3 and fails 1, and the runner-named test."""
    if str(CLIENTS) not in sys.path:
        sys.path.insert(0, str(CLIENTS))
    import parity_ci

    with django_db_blocker.unblock():
        token = upload_token_create(project=Project.objects.get(slug=SLUG))
        tests = passing_on_both()
    broken = {t.key: ("skipped", "needs 8 devices") for t in tests[:SKIPPED]}
    broken.update({t.key: ("failed", "AssertionError: 1 != 2") for t in tests[-FAILED:]})
    cases = [
        Case(t.class_name, t.name, *broken.get(t.key, ("passed", "")), file=t.file) for t in tests
    ]
    cases.append(Case("TestOpsXLA", "test_add_xla_float32", file="test/test_ops.py"))
    reports = tmp_path_factory.mktemp("test-reports")
    (reports / "tpu-pr.xml").write_bytes(junit_xml(*cases))
    client = parity_ci.Client(site.url, token, SLUG, log=lambda line: None)
    request = parity_ci.UploadRequest(
        backend="tpu", commit="c" * 40, branch="feature/pr-7", run="pr-7-tpu", complete=False
    )
    (answer,) = client.upload([str(reports)], request)
    client.upload_wait(answer["id"], timeout=120)
    return {"run": answer["run"], "verdict": client.verdict(answer["run"]), "broken": broken}


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_a_ci_uploads_run_page_shows_exactly_the_gaps_its_verdict_opened(page, ci_run):
    verdict = ci_run["verdict"]
    assert {g["test"]: g["state"] for g in verdict["gaps"]} == {
        key: state for key, (state, _) in ci_run["broken"].items()
    }

    page.goto(f"/p/{SLUG}/runs/?backend=tpu")
    page.locator(f'#runs-table tr[data-run="{ci_run["run"]}"] td').first.get_by_role("link").click()

    expect(page.locator("h1")).to_contain_text(f"Run {ci_run['run']}")
    rows = page.locator("#opened-gaps tbody tr")
    expect(rows).to_have_count(len(verdict["gaps"]))
    shown = rows.evaluate_all("rs => rs.map(r => [r.dataset.test, r.dataset.state])")
    assert sorted(map(tuple, shown)) == sorted((g["test"], g["state"]) for g in verdict["gaps"])
    expect(page.locator("#verdict")).to_contain_text("not ok")
    expect(page.locator("#verdict")).to_contain_text("Not complete")
    expect(page.locator("#opened-gaps")).to_contain_text("needs 8 devices")
    width = "narrow" if page.viewport_size["width"] < 600 else "desktop"
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"run_page[{width}].png", full_page=True)
    # A gap's test opens its page.
    first = verdict["gaps"][0]
    page.locator("#opened-gaps tbody tr td.test a", has_text=first["test"]).click()
    expect(page).to_have_url(f"/p/{SLUG}/tests/{first['test_id']}/")
    if page.viewport_size["width"] < 600:
        page.go_back()
        overflow = page_overflow(page)
        assert overflow <= 0, f"the run page scrolls sideways by {overflow}px at 400px"


@pytest.mark.parametrize("page", ["desktop", "narrow"], indirect=True)
def test_the_search_box_finds_a_test_by_its_runners_name(page, ci_run):
    test = TestCase.objects.get(key="test/test_ops.py::TestOps::test_add_float32")
    page.goto(f"/p/{SLUG}/gaps/")

    box = page.get_by_role("searchbox", name="Find a test")
    box.fill(RUNNER_NAME)
    box.press("Enter")

    expect(page).to_have_url(f"/p/{SLUG}/tests/{test.pk}/")
    expect(page.locator("h1")).to_contain_text("test_add_float32")
    page.get_by_role("searchbox", name="Find a test").fill("test_add_")
    page.get_by_role("searchbox", name="Find a test").press("Enter")
    expect(page.locator("#test-results")).to_contain_text(test.key)
    overflow = page_overflow(page)
    assert overflow <= 0, f"the search results scroll sideways by {overflow}px"
