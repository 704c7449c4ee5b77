"""Exemptions written on the dashboard (``parity.dashboard.triage_views``): the exemptions page's
form
(its refusals beside the field at fault, and a success that moves the numbers at once), removal,
the file scopes of the gap rows' and heatmap rows' small form, and who may do any of it."""

import re
from html import unescape

import pytest

from parity.models import Gap, Triage
from tests.parity.conftest import run_xml
from tests.parity.dashboard.conftest import ISSUES, text
from tests.parity.dashboard_scenario import DAY2, A, B, runs_by_day, tid

P = "/p/pytorch-xla"
PAGE = f"{P}/exemptions/"


def field_group(html: str, name: str) -> str:
    """The new-exemption form's field ``name``: its label, help, errors and widget."""
    form = html.split('id="new-exemption"')[1].split("</form>")[0]
    groups = re.findall(r'<div class="field[^"]*">(.*?)</div>\s*(?=<div class="field|</div>)', form)
    return next(g for g in groups if f'name="{name}"' in g)


def errors(html: str, name: str) -> list[str]:
    return re.findall(r"<li>(.*?)</li>", field_group(html, name).split("errorlist")[-1])


def neuron_b_gaps() -> set[tuple[bool, bool]]:
    """(tracked, intended) of neuron's open gaps of test_b.py."""
    gaps = Gap.objects.filter(is_open=True, backend__name="neuron", test__file=B)
    return set(gaps.values_list("tracked", "intended"))


# --- Who may write ------------------------------------------------------------------------------

NEW = {"match": B, "backends": ["neuron"], "kind": "tracked", "issue_url": f"{ISSUES}77"}


def test_readers_see_no_form_and_may_not_post(client, viewer, runs, exemptions):
    for reader, hint in [(client, "Log in</a> to add"), (viewer, "Only the project's maintainers")]:
        html = text(reader.get(PAGE))
        assert hint in html
        assert 'id="new-exemption"' not in html and "Remove</button>" not in html
        assert "Exempt…" not in text(reader.get(f"{P}/?exempt={B}"))  # heatmap rows
    anonymous = client.post(f"{PAGE}?kind=tracked", NEW)
    assert anonymous.status_code == 302
    assert (
        anonymous["Location"] == "/accounts/login/?next=/p/pytorch-xla/exemptions/%3Fkind%3Dtracked"
    )
    assert viewer.post(PAGE, NEW).status_code == 403
    pk = exemptions["file"].pk
    assert client.post(f"{PAGE}{pk}/delete/").status_code == 302
    assert viewer.post(f"{PAGE}{pk}/delete/").status_code == 403
    assert viewer.get(f"{PAGE}{pk}/delete/").status_code == 405
    assert Triage.objects.count() == len(exemptions)


# --- The exemptions page's form ---------------------------------------------------------------


def test_maintainer_sees_the_form_and_a_remove_button_per_row(maintainer, runs, exemptions):
    html = text(maintainer.get(PAGE))
    assert 'id="new-exemption"' in html
    assert html.count("Remove</button>") == len(exemptions)
    backends = field_group(html, "backends")
    assert re.findall(r'value="(\w+)"', backends) == ["cpu", "gpu", "neuron", "tpu"]
    assert "None ticked: every backend." in backends


# The pages name what the form shows, never the API's field names ('issue_url').
AN_ISSUE_URL = "the URL of an issue that tracks it"


@pytest.mark.parametrize(
    "body, field, message",
    [
        ({"kind": "tracked"}, "issue_url", f"A tracked exemption needs {AN_ISSUE_URL}."),
        ({"kind": "quarantine"}, "issue_url", f"A quarantine exemption needs {AN_ISSUE_URL}."),
        ({"kind": "intended"}, "note", "An intended exemption needs a short note saying why."),
        ({"kind": "intended", "note": "  "}, "note", "An intended exemption needs a short note"),
        ({"kind": "tracked", "issue_url": "not a url"}, "issue_url", "Enter a valid URL."),
        ({"match": "test/x.py::", "note": "n"}, "match", "'test/x.py::' ends with '::'"),
        ({"match": "**", "note": "n"}, "match", "'**' names every file"),
        ({"match": "", "note": "n"}, "match", "This field is required."),
        ({"backends": ["mps"], "note": "n"}, "backends", "Select a valid choice. mps is not"),
        ({"expires_on": "2001-01-01", "note": "n"}, "expires_on", "The expiry day 2001-01-01 has"),
    ],
)
def test_the_form_refuses_beside_the_field(maintainer, runs, body, field, message):
    body = {"match": B, "kind": "intended", **body}
    response = maintainer.post(f"{PAGE}?backend=neuron", body)
    html = text(response)  # the page again, the form open, the refusal beside its field
    assert '<details class="card new-exemption" id="new-exemption" open>' in html
    assert any(e.startswith(message) for e in errors(html, field)), errors(html, field)
    assert not Triage.objects.exists()
    if body["match"]:
        assert f'value="{body["match"]}"' in field_group(html, "match")  # kept to correct


def test_preview_counts_what_a_pattern_covers_and_saves_nothing(maintainer, runs):
    body = {"match": "test/ops/**", "backends": ["neuron"], "kind": "tracked", "preview": "1"}
    html = text(maintainer.post(f"{PAGE}?backend=neuron", body))
    assert '<details class="card new-exemption" id="new-exemption" open>' in html
    preview = html.split('id="exemption-preview"')[1].split("</p>")[0]
    assert "names 8 tests in 2 files; on neuron it would cover 4 open gaps, 4 of them" in (
        re.sub(r"<[^>]+>", "", preview)
    )
    assert not Triage.objects.exists()  # no issue URL needed to look
    assert 'value="test/ops/**"' in field_group(html, "match")  # kept, to save next

    bad = text(maintainer.post(PAGE, {"match": "**", "kind": "tracked", "preview": "1"}))
    assert any(e.startswith("'**' names every file") for e in errors(bad, "match"))
    assert 'id="exemption-preview"' not in bad


def test_a_new_exemption_tracks_its_gaps_at_once(maintainer, runs):
    assert neuron_b_gaps() == {(False, False)}
    response = maintainer.post(f"{PAGE}?backend=neuron", NEW, follow=True)
    assert response.redirect_chain == [(f"{PAGE}?backend=neuron", 302)]
    html = text(response)
    assert f"Exemption saved: {B} linked to its issue. The numbers are updated." in html
    (triage,) = Triage.objects.all()
    assert (triage.match, triage.kind, triage.created_by.username) == (B, "tracked", "maintainer")
    assert [b.name for b in triage.backends.all()] == ["neuron"]
    assert f'data-triage="{triage.pk}"' in html
    assert neuron_b_gaps() == {(True, False)}
    # Neuron's four gaps of test_b.py leave its untracked count on the overview.
    assert '?backend=neuron&tracked=untracked&open=1">0</a>' in text(maintainer.get("/"))
    # CI leaves the file out on neuron.
    files = html.split('id="backend-files"')[1]
    assert "Test files CI runs on neuron" in files and f"<code>{B}</code>" in files


def test_an_exemption_on_every_backend_expiring_later(maintainer, runs):
    body = {
        "match": "test/ops/**",
        "kind": "intended",
        "note": "ops move",
        "expires_on": "2999-01-01",
    }
    maintainer.post(PAGE, body)
    triage = Triage.objects.get()
    assert (list(triage.backends.all()), str(triage.expires_on)) == ([], "2999-01-01")
    assert neuron_b_gaps() == {(False, True)}


def test_removing_an_exemption_untracks_its_gaps(maintainer, runs, exemptions):
    assert neuron_b_gaps() == {(True, False)}
    pk = exemptions["file"].pk
    back = f"{PAGE}?kind=tracked"
    response = maintainer.post(f"{PAGE}{pk}/delete/", {"next": back}, follow=True)
    assert response.redirect_chain == [(back, 302)]
    assert f"Exemption removed: {B}. The numbers are updated." in text(response)
    assert not Triage.objects.filter(pk=pk).exists()
    assert neuron_b_gaps() == {(False, False)}
    # Another project's triage, or none, is not found.
    assert maintainer.post(f"{PAGE}{pk}/delete/").status_code == 404


def test_an_exemption_that_passes_now_is_flagged_and_removed_after_a_confirmation(
    maintainer, runs, exemptions, ingest
):
    # The weekly probe on TPU runs the exempted tests too: a4 (exempted) passes now.
    probe = {**runs_by_day()[DAY2]["tpu"], tid(A, 4): "passed"}
    response = ingest(
        ("probe.xml", run_xml(probe)), backend="tpu", commit="e" * 40, complete="true", probe="true"
    )
    assert response.status_code == 202, response.content
    probe_run = response.json()["run"]
    pk = exemptions["test"].pk

    html = text(maintainer.get(f"{PAGE}?probe=passes"))

    rows = re.findall(r'<tr data-triage="(\d+)"', html)
    assert rows == [str(pk)]  # the filter keeps only those that pass now
    row = html.split(f'<tr data-triage="{pk}"')[1].split("</tr>")[0]
    assert re.search(
        r'data-backend="tpu" data-outcome="passed">.*passes now.* tpu · 1 of 1 passed', row
    )
    assert f'href="{P}/runs/{probe_run}/"' in row and f"run {probe_run}," in row
    # The remove button sits behind a confirmation that says why.
    confirm = row.split('<details class="confirm-remove">')[1].split("</details>")[0]
    assert "Remove: passes now" in confirm
    assert "Its tests passed in the last probe on tpu." in confirm
    assert f'action="{PAGE}{pk}/delete/"' in confirm and "Yes, remove it</button>" in confirm

    removed = maintainer.post(f"{PAGE}{pk}/delete/", {"next": f"{PAGE}?probe=passes"}, follow=True)

    assert "Exemption removed:" in text(removed)
    assert not Triage.objects.filter(pk=pk).exists()
    gap = Gap.objects.get(is_open=True, backend__name="tpu", test__key=tid(A, 4))
    assert (gap.tracked, gap.triage_id) == (False, None)  # its gap counts again, until fixed


# --- "Exempt…" on a gap row and a heatmap row: the triage form's file scope ----------------------


def test_a_gap_rows_form_exempts_its_file_on_its_backend(maintainer, runs):
    gap = Gap.objects.get(is_open=True, backend__name="tpu", test__key=tid(A, 4))
    html = text(maintainer.get(f"{P}/gaps/?backend=tpu"))
    row = html.split(f'<input type="hidden" name="gap" value="{gap.pk}">')[1].split("</form>")[0]
    assert f'<input type="hidden" name="file" value="{A}">' in row
    assert '<option value="file">this file on tpu</option>' in row
    body = {"scope": "file", "gap": gap.pk, "file": A, "backend": "tpu", "kind": "intended",
            "note": "no such kernel", "next": f"{P}/gaps/?backend=tpu"}  # fmt: skip
    response = maintainer.post(f"{P}/triage/", body, follow=True)
    assert "Exemption saved: marked intended." in text(response)
    triage = Triage.objects.get()
    assert (triage.match, [b.name for b in triage.backends.all()]) == (A, ["tpu"])
    tpu_a = Gap.objects.filter(is_open=True, backend__name="tpu", test__file=A)
    assert set(tpu_a.values_list("intended", flat=True)) == {True}
    assert not Gap.objects.filter(is_open=True, backend__name="gpu", test__file=A, intended=True)


def test_a_heatmap_rows_form_exempts_its_file_on_a_chosen_backend(maintainer, runs):
    listed = text(maintainer.get(f"{P}/?sort=neuron"))
    # One form at most: each row links it, for its own file.
    assert '<form method="post"' not in listed.split('id="heatmap"')[1]
    link = listed.split(f'<tr data-name="{B}">')[1].split("</th>")[0]
    assert 'href="?sort=neuron&exempt=test%2Fops%2Ftest_b.py#exempt-form">Exempt…</a>' in link
    html = text(maintainer.get(f"{P}/?sort=neuron&exempt={B}"))
    assert html.split('id="heatmap"')[1].count("<form ") == 1
    row = html.split(f'<tr data-name="{B}">')[1].split("</th>")[0]
    assert '<details class="triage" id="' in row and " open>" in row
    assert "Exempt…</summary>" in row and '<input type="hidden" name="scope" value="file">' in row
    # The backend sorted by is chosen; every backend is one choice.
    assert '<option value="neuron" selected>neuron</option>' in row
    assert '<option value="">every backend</option>' in row
    assert "Exempt…" not in text(maintainer.get(f"{P}/?dir=1"))  # folders: no form
    body = {"scope": "file", "file": B, "backend": "", "kind": "tracked",
            "issue_url": f"{ISSUES}88", "next": f"{P}/?sort=neuron"}  # fmt: skip
    response = maintainer.post(f"{P}/triage/", body)
    assert response["Location"] == f"{P}/?sort=neuron"
    triage = Triage.objects.get()
    assert (triage.match, list(triage.backends.all())) == (B, [])  # every backend
    assert neuron_b_gaps() == {(True, False)}


def test_the_small_form_insists_on_an_issue_or_a_note(maintainer, runs):
    base = {"scope": "file", "file": B, "backend": "neuron", "next": f"{P}/"}
    html = text(maintainer.post(f"{P}/triage/", {**base, "kind": "tracked"}, follow=True))
    assert f"Exemption not saved: A tracked exemption needs {AN_ISSUE_URL}." in html
    html = text(maintainer.post(f"{P}/triage/", {**base, "kind": "intended"}, follow=True))
    assert "Exemption not saved: An intended exemption needs a short note saying why." in html
    no_file = {**base, "file": "", "kind": "intended", "note": "n"}
    html = text(maintainer.post(f"{P}/triage/", no_file, follow=True))
    assert "Exemption not saved: Nothing to triage for 'file'." in html
    assert not Triage.objects.exists()


def test_a_refused_small_form_opens_again_with_the_refusal_beside_its_field(maintainer, runs):
    page = f"{P}/gaps/?open=1&backend=neuron"
    html = maintainer.get(page).content.decode()
    forms = re.findall(r'<details class="triage" id="([^"]+)">.*?</details>', html, re.S)
    assert len(forms) == 4 and len(set(forms)) == 4  # neuron's four gaps, one form each
    first = html.split(f'id="{forms[0]}"')[1].split("</details>")[0]
    fields = {
        name: unescape(value)
        for name, value in re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', first)
    }
    body = {**fields, "scope": "test", "kind": "intended", "issue_url": f"{ISSUES}9"}

    response = maintainer.post(f"{P}/triage/", body)
    assert response["Location"] == f"{page}#{forms[0]}"  # back to the form itself
    again = text(maintainer.get(page))
    refused = again.split(f'id="{forms[0]}"')[1].split("</details>")[0]
    assert refused.startswith(" open>")
    note = "Not saved: An intended exemption needs a short note saying why."
    assert re.search(
        r'name="note"[^>]*></label> <p class="errorlist" role="alert">' + re.escape(note), refused
    )
    assert re.search(r'value="intended" checked', refused)  # what it held, to correct
    assert f'value="{ISSUES}9"' in refused and '<option value="test" selected>' in refused
    assert len(re.findall(r'<details class="triage" id="[^"]+" open>', again)) == 1  # only it
    assert not Triage.objects.exists()
    assert f'id="{forms[0]}" open' not in text(maintainer.get(page))  # one view only
