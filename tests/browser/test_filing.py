"""Filing an issue in Chromium, on the demo, against the local fake GitHub: a maintainer ticks
two untracked gaps, files one issue for both, and sees them linked; and a gap tracked only by a
closed issue reads so after the sync. No request leaves 127.0.0.1 (the page fixture checks)."""

import threading

import pytest
from django.db import connections
from playwright.sync_api import expect

from parity.models import Gap, TrackingIssue
from parity.services.issue_sync import issues_sync
from parity.services.triage import TriageRequest, triage_create, triage_delete
from tests.browser.conftest import SCREENSHOTS, log_in, no_chromium
from tests.fake_tracker import github_issue

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "pytorch-xla"


@pytest.fixture
def may_write(fake_tracker, settings):
    settings.PARITY_TRACKER_WRITE_TOKENS = {"github.com": fake_tracker.write_token}
    return fake_tracker


def test_a_maintainer_files_one_issue_for_two_ticked_gaps(page, site, may_write, request):
    log_in(page, site)
    page.goto(f"/p/{SLUG}/gaps/?open=1&tracked=untracked&backend=tpu")
    rows = page.locator("#new-gaps tbody tr")
    tests = [rows.nth(n).locator("td.test > a").inner_text() for n in (0, 1)]  # not owners
    for n in (0, 1):
        rows.nth(n).locator('input[name="gap"][type="checkbox"]').check()
    page.get_by_role("button", name="File an issue for the selected gaps").click()

    expect(page.locator("h1")).to_contain_text("File an issue")
    listed = page.locator("#issue-gaps tbody tr td.test")
    expect(listed).to_have_count(2)
    assert sorted(listed.all_inner_texts()) == sorted(tests)
    assert page.locator("#id_title").input_value().startswith("[tpu] 2 tests")
    page.locator("#id_labels").fill("xla:tpu")
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{request.node.name}-draft.png", full_page=True)
    page.get_by_role("button", name="Create in pytorch/xla and link").click()

    expect(page.locator(".message.success")).to_contain_text(
        "Filed https://github.com/pytorch/xla/issues/1 and linked it to 2 gap(s)"
    )
    (created,) = may_write.seen("POST")
    assert created.body["labels"] == ["xla:tpu"]
    assert all(test in created.body["body"] for test in tests)
    page.goto(f"/p/{SLUG}/gaps/?open=1&tracked=tracked&backend=tpu")
    for test in tests:
        row = page.locator("#new-gaps tbody tr", has=page.locator("td.test", has_text=test))
        expect(row.locator("a.issue")).to_contain_text("pytorch/xla#1 [tpu] 2 tests")


def committed(work):
    """Run ``work`` on a connection of its own, outside the test's transaction, so the live
    server (another connection) sees what it writes; returns its result."""
    result = []

    def run() -> None:
        try:
            result.append(work())
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert result, "the committed work failed (see the thread's traceback)"
    return result[0]


def test_a_gap_tracked_only_by_a_closed_issue_reads_so(page, site, fake_tracker, settings):
    settings.PARITY_TRACKER_SYNC_SECONDS = settings.PARITY_TRACKER_SYNC_TICK_SECONDS
    # An issue no skip of the demo cites (those track their gaps too, and would close with it).
    fake_tracker.add_github(
        "pytorch/xla", github_issue(9020, "XLA does not support complex64", state="closed")
    )
    url = "https://github.com/pytorch/xla/issues/9020"

    def track_by_a_closed_issue():
        gap = Gap.objects.filter(
            project__slug=SLUG,
            is_open=True,
            tracked=False,
            intended=False,
            backend__name="tpu",
            state="skipped",
        ).first()
        request = TriageRequest(kind="tracked", gap=gap.pk, issue_url=url)
        triage = triage_create(project=gap.project, request=request)
        issues_sync()
        gap.refresh_from_db()
        return gap, triage

    gap, triage = committed(track_by_a_closed_issue)
    try:
        assert gap.tracked_closed

        page.goto(f"/p/{SLUG}/tests/{gap.test_id}/")

        line = page.locator('#test-lines tr[data-backend="tpu"]')
        expect(line.locator(".badge.closed")).to_have_text("tracked · issue closed")
        expect(line.locator("a.issue.closed")).to_have_text(
            "pytorch/xla#9020 XLA does not support complex64 (closed)"
        )
        page.goto(f"/p/{SLUG}/gaps/?open=1&tracked=closed")
        expect(page.locator("#new-gaps tbody tr")).to_have_count(1)
    finally:  # the module's other tests share the demo

        def take_back() -> bool:
            triage_delete(triage=triage)
            TrackingIssue.objects.filter(url=url).update(state="unknown", title="")
            return True

        committed(take_back)
