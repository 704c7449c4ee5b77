"""Exemptions in Chromium, on the demo: a maintainer exempts a gap's test file from its row and
sees the gap tracked and the file left out of the backend's run; the exemptions page's form
refuses an exemption without a note, then saves it, and removes it. Screenshots at a desktop
width (the fixture's) and at 400 px (``<test>-400px.png``)."""

import re

import pytest
from playwright.sync_api import expect

from parity.models import Gap, GapState, TestCase, Triage
from tests.browser.conftest import MAINTAINER, SCREENSHOTS, log_in, no_chromium

pytestmark = [pytest.mark.browser, pytest.mark.django_db, no_chromium]
SLUG = "pytorch-xla"
ISSUE = "https://github.com/pytorch/xla/issues/42424"


def narrow_screenshot(page, request) -> None:
    """The page as a phone shows it: 400 px wide, whole."""
    page.set_viewport_size({"width": 400, "height": 800})
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{request.node.name}-400px.png", full_page=True)
    page.set_viewport_size({"width": 1400, "height": 900})


def test_a_maintainer_exempts_a_gaps_file_from_its_row(page, site, request):
    log_in(page, site)
    page.goto(f"/p/{SLUG}/gaps/?open=1&tracked=untracked")
    row = page.locator("#new-gaps tbody tr").first
    backend = row.get_attribute("data-backend")
    file = row.locator("td.test").inner_text().split("::")[0]
    row.locator("details.triage summary", has_text="Exempt…").click()
    row.locator("select[name=scope]").select_option(label=f"this file on {backend}")
    row.locator("input[name=issue_url]").fill(ISSUE)
    row.get_by_role("button", name="Save").click()
    expect(page.locator(".message.success")).to_contain_text("Exemption saved: linked to its issue")
    # Every untracked gap of that file on that backend is tracked now.
    on_backend = page.locator(f'#new-gaps tr[data-backend="{backend}"] td.test')
    expect(on_backend.filter(has_text=f"{file}::")).to_have_count(0)
    page.goto(f"/p/{SLUG}/gaps/?open=1&tracked=tracked&backend={backend}")
    tracked = page.locator("#new-gaps tbody tr", has=page.locator("td.test", has_text=f"{file}::"))
    expect(tracked.first).to_be_visible()
    expect(tracked.first.locator("a.issue", has_text="pytorch/xla#42424")).to_be_visible()

    # The exemptions page lists it, and CI no longer runs the file there.
    page.get_by_role("link", name="Exemptions").click()
    triage = Triage.objects.get(match=file, issue__url=ISSUE)
    listed = page.locator(f'#exemptions-table tr[data-triage="{triage.pk}"]')
    expect(listed).to_contain_text(file)
    expect(listed).to_contain_text("every test of the matching files")
    expect(listed.locator("td").nth(2)).to_have_text(backend)
    expect(listed).to_contain_text(MAINTAINER[0])
    page.goto(f"/p/{SLUG}/exemptions/?files={backend}")
    files = page.locator("#backend-files")
    expect(files.locator("h2")).to_contain_text(f"Test files CI runs on {backend}")
    expect(files.locator("#files-list li", has_text=file)).to_have_count(0)
    expect(files.locator(f'#removed-files li[data-triage="{triage.pk}"]')).to_contain_text(file)
    narrow_screenshot(page, request)


def test_a_refused_exempt_form_stays_open_with_the_refusal_beside_its_field(page, site, request):
    log_in(page, site)
    page.goto(f"/p/{SLUG}/gaps/?open=1&tracked=untracked")
    row = page.locator("#new-gaps tbody tr").nth(2)
    test = row.locator("td.test > a").inner_text()  # the test, not its owners
    row.locator("details.triage summary").click()
    row.get_by_label("intended, because").check()
    row.get_by_role("button", name="Save").click()

    row = page.locator("#new-gaps tbody tr", has=page.locator("td.test", has_text=test))
    form = row.locator("details.triage")
    expect(form).to_have_attribute("open", "")
    error = form.locator(".errorlist")
    expect(error).to_have_text("Not saved: An intended exemption needs a short note saying why.")
    expect(error).to_be_in_viewport()  # the page went back to the form, not to its top
    expect(form.get_by_label("intended, because")).to_be_checked()
    expect(page.locator("#new-gaps details.triage[open]")).to_have_count(1)
    narrow_screenshot(page, request)
    form.locator("input[name=note]").fill("not on this backend by design")
    form.get_by_role("button", name="Save").click()
    expect(page.locator(".message.success")).to_contain_text("Exemption saved: marked intended")


def test_the_exemptions_form_insists_on_a_note_then_saves_and_removes(page, site, request):
    page.goto(f"/p/{SLUG}/exemptions/")
    expect(page.locator("#new-exemption")).to_have_count(0)  # anonymous: no form
    log_in(page, site)
    page.reload()
    form = page.locator("#new-exemption")
    form.locator("summary").click()
    form.get_by_label("Tests").fill("test/spmd/**")
    form.get_by_label("tpu").check()
    form.get_by_label("intended").check()
    # Before saving: how many tests and open gaps it covers, counted here apart.
    form.get_by_role("button", name="Preview").click()
    tests = TestCase.objects.filter(project__slug=SLUG, key__startswith="test/spmd/")
    files = len({t.file for t in tests})
    gaps = Gap.objects.filter(test__in=tests, backend__name="tpu", is_open=True).exclude(
        state=GapState.REFERENCE_MISSING
    )
    expect(page.locator("#exemption-preview")).to_contain_text(
        f"names {tests.count():,} tests in {files} files; on tpu it would cover "
        f"{gaps.count():,} open gaps"
    )
    expect(page.locator("#new-exemption")).to_have_attribute("open", "")
    expect(form.get_by_label("tpu")).to_be_checked()
    form.get_by_role("button", name="Save exemption").click()
    note_error = page.locator("#new-exemption .errorlist")
    expect(note_error).to_have_text("An intended exemption needs a short note saying why.")
    expect(page.locator("#new-exemption")).to_have_attribute("open", "")
    expect(form.get_by_label("Tests")).to_have_value("test/spmd/**")  # kept, to correct
    narrow_screenshot(page, request)

    form.get_by_label("Note").fill("no device mesh on a single TPU host")
    page.get_by_role("button", name="Save exemption").click()
    expect(page.locator(".message.success")).to_contain_text("Exemption saved: test/spmd/**")
    row = page.locator("#exemptions-table tbody tr").first
    expect(row).to_contain_text("test/spmd/**")
    expect(row).to_contain_text("no device mesh on a single TPU host")
    expect(row.locator(".badge.intended")).to_be_visible()

    # CI reads it: removing asks first, and says what follows.
    expect(row.get_by_role("button", name="Remove")).to_be_hidden()
    row.locator("details.ask-remove summary").click()
    expect(row.locator("details.ask-remove")).to_contain_text("CI stops applying it")
    row.get_by_role("button", name="Remove").click()
    expect(page.locator(".message.success")).to_contain_text("Exemption removed: test/spmd/**")
    expect(page.locator("#exemptions-table", has_text="test/spmd/**")).to_have_count(0)
    assert re.search(r"/exemptions/$", page.url)


def test_a_heatmap_rows_exempt_form(page, site, request):
    log_in(page, site)
    page.goto(f"/p/{SLUG}/?sort=neuron")
    expect(page.locator("#heatmap form")).to_have_count(0)  # one form, for the row asked
    first = page.locator("#heatmap tbody tr").first
    name = first.get_attribute("data-name")
    first.get_by_role("link", name="Exempt…").click()
    expect(page.locator("#heatmap form")).to_have_count(1)
    row = page.locator(f'#heatmap tbody tr[data-name="{name}"]')
    expect(row.locator("details.triage")).to_have_attribute("open", "")
    expect(row.locator("select[name=backend]")).to_have_value("neuron")
    expect(row.locator("input[name=issue_url]")).to_be_visible()
    narrow_screenshot(page, request)
