"""The triage queue in Chromium, on the demo: its groups are the untracked gaps grouped here
from the Gap rows; a maintainer exempts a (backend, file) group in one click, or ticks groups and
exempts them together, and the gaps move to intended/tracked while the overview's headline for
the backend drops by exactly those tests. Screenshots at 1400 px (the fixture's) and 400 px
(``<test>-400px.png``)."""

import re
from collections import Counter, defaultdict

import pytest
from playwright.sync_api import expect

from parity.models import Gap, GapState
from tests.browser.conftest import log_in, no_chromium
from tests.browser.test_exemptions import narrow_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "pytorch-xla"
ISSUE = "https://github.com/pytorch/xla/issues/51515"
STATE_WORDS = {"missing": "missing", "skipped": "skipped", "failed": "failed", "error": "error"}


def untracked_by_file(backend: str | None = None) -> list[tuple[str, str, int, str, str]]:
    """(backend, file, gaps, state mix as shown, first seen) per group, largest first, counted
    from the open Gap rows that are neither tracked nor intended."""
    gaps = Gap.objects.filter(
        project__slug=SLUG, is_open=True, tracked=False, intended=False
    ).exclude(state=GapState.REFERENCE_MISSING)
    if backend:
        gaps = gaps.filter(backend__name=backend)
    groups = defaultdict(list)
    for name, file, state, opened in gaps.values_list(
        "backend__name", "test__file", "state", "opened_at"
    ):
        groups[(name, file)].append((state, opened))
    rows = []
    for (name, file), members in groups.items():
        states = Counter(state for state, _ in members)
        mix = " ".join(f"{states[s]} {word}" for s, word in STATE_WORDS.items() if states[s])
        first = min(opened for _, opened in members).strftime("%Y-%m-%d")
        rows.append((name, file, len(members), mix, first))
    return sorted(rows, key=lambda r: (-r[2], r[0], r[1]))


def shown_groups(page) -> list[tuple[str, str, int, str, str]]:
    rows = page.locator("#queue-files tbody tr")
    shown = []
    for i in range(rows.count()):
        row = rows.nth(i)
        mix = " ".join(row.locator("td.mix").inner_text().split())
        first = row.locator("td").nth(4).inner_text().strip()
        shown.append(
            (
                row.get_attribute("data-backend"),
                row.get_attribute("data-file"),
                int(row.get_attribute("data-gaps")),
                mix,
                first,
            )
        )
    return shown


def never_run(backend: str) -> tuple[int, int]:
    """(tests, files) of ``backend``'s untracked gaps that are tests its run lacks, from the
    Gap rows."""
    missing = Gap.objects.filter(
        is_open=True, backend__name=backend, state="missing", tracked=False, intended=False
    )
    return missing.count(), len(set(missing.values_list("test__file", flat=True)))


def headline(page, backend: str) -> tuple[int, int]:
    """(tests never run, files) of the overview's headline for ``backend``."""
    text = page.locator(f'.triage-panel li[data-backend="{backend}"]').inner_text()
    match = re.search(r"(\d+) tests? missing, in (\d+) files?", text)
    assert match, text
    return int(match[1]), int(match[2])


def test_the_queues_groups_are_the_untracked_gaps_grouped(page, site, request):
    page.goto(f"/p/{SLUG}/queue/")
    expected = untracked_by_file()
    expect(page.locator("#queue-files h2 .badge")).to_have_text(str(len(expected)))
    assert shown_groups(page) == expected[:50]
    if len(expected) > 50:
        page.locator("#queue-files .pager a", has_text="smaller").click()
        assert shown_groups(page) == expected[50:100]
    # A group's "Tests" link opens exactly its gaps.
    page.goto(f"/p/{SLUG}/queue/?backend=neuron")
    first = page.locator("#queue-files tbody tr").first
    backend, file, count = (
        first.get_attribute(a) for a in ("data-backend", "data-file", "data-gaps")
    )
    first.get_by_role("link", name="Tests").click()
    expect(page.locator("#new-gaps h2 .badge")).to_have_text(count)
    tests = page.locator("#new-gaps tbody td.test")
    assert all(t.startswith(f"{file}::") for t in tests.all_inner_texts())
    assert {r.get_attribute("data-backend") for r in page.locator("#new-gaps tbody tr").all()} == {
        backend
    }
    page.goto(f"/p/{SLUG}/queue/")
    narrow_screenshot(page, request)


def test_a_group_exempted_in_one_click_leaves_the_queue_and_the_headline(page, site, request):
    log_in(page, site)
    page.goto("/")
    tests, files = headline(page, "neuron")
    assert (tests, files) == never_run("neuron")
    burndown = page.locator(f'section[data-project="{SLUG}"] svg.burndown polyline')
    expect(burndown).to_have_count(3)  # gpu, neuron, tpu; not the reference
    neuron_before = page.locator(".burndown-figure .legend li", has_text="neuron").inner_text()

    # One group: its own "Exempt…" form, intended.
    page.locator(f"#triage-{SLUG}").get_by_role("link", name="open the triage queue").click()
    expect(page).to_have_url(re.compile(r"/queue/$"))
    page.goto(f"/p/{SLUG}/queue/?backend=neuron")
    row = page.locator("#queue-files tbody tr").first
    file, count = row.get_attribute("data-file"), int(row.get_attribute("data-gaps"))
    missing = Gap.objects.filter(
        is_open=True,
        backend__name="neuron",
        test__file=file,
        state="missing",
        tracked=False,
        intended=False,
    ).count()
    assert missing > 0  # a file neuron never ran
    row.locator("details.triage summary").click()
    row.locator("input[value=intended]").check()
    row.locator("input[name=note]").fill("Neuron runs no core ATen op tests")
    row.get_by_role("button", name="Save").click()
    expect(page.locator(".message.success")).to_contain_text("Exemption saved: marked intended")
    expect(page.locator(f'#queue-files tr[data-file="{file}"]')).to_have_count(0)
    gaps = Gap.objects.filter(is_open=True, backend__name="neuron", test__file=file)
    assert gaps.count() >= count and not gaps.filter(tracked=False, intended=False).exists()

    page.goto("/")
    assert headline(page, "neuron") == (tests - missing, files - 1)
    # The burn-down's last point is the current snapshot, recounted by the triage.
    neuron_after = page.locator(".burndown-figure .legend li", has_text="neuron").inner_text()
    assert int(neuron_after.split()[-1]) == int(neuron_before.split()[-1]) - count

    # Two groups ticked, one click: tracked by one issue.
    page.goto(f"/p/{SLUG}/queue/?backend=neuron")
    rows = page.locator("#queue-files tbody tr")
    ticked = [rows.nth(i).get_attribute("data-file") for i in (0, 1)]
    for i in (0, 1):
        rows.nth(i).locator("input[name=group]").check()
    page.locator("#queue-exempt input[name=issue_url]").fill(ISSUE)
    page.get_by_role("button", name="Exempt ticked groups").click()
    expect(page.locator(".message.success")).to_contain_text("2 group(s) exempted")
    for file in ticked:
        expect(page.locator(f'#queue-files tr[data-file="{file}"]')).to_have_count(0)
        left = Gap.objects.filter(
            is_open=True, backend__name="neuron", test__file=file, tracked=False, intended=False
        )
        assert not left.exists()
    page.goto("/")
    assert headline(page, "neuron") == never_run("neuron")
    narrow_screenshot(page, request)
