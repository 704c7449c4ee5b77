"""Filing an issue from the dashboard: a maintainer picks a gap, several, or a reason; with a
write token parity creates the issue on the (fake) tracker and links it in one step, without
one it links the tracker's own prefilled new-issue page. Readers and viewers may not."""

import urllib.parse

import pytest

from parity.models import Gap, Reason, TrackingIssue, Triage
from tests.fake_tracker import Scripted
from tests.parity.dashboard.conftest import text
from tests.parity.dashboard_scenario import NEURON, A, B, tid

PAGE = "/p/pytorch-xla/file-issue/"
GAPS = "/p/pytorch-xla/gaps/?open=1"


def form_data(initial: dict, **fields) -> dict:
    """What a browser posts for the drafted form (an empty field: an empty string)."""
    return {**{k: "" if v is None else v for k, v in initial.items()}, **fields}


def gap_of(backend: str, key: str) -> Gap:
    return Gap.objects.get(backend__name=backend, test__key=key, is_open=True)


@pytest.fixture
def may_write(fake_tracker, settings, xla):
    settings.PARITY_TRACKER_WRITE_TOKENS = {"github.com": fake_tracker.write_token}
    xla.new_issue_labels = ["xla:tpu", "parity"]
    xla.save()
    return fake_tracker


def test_without_a_write_token_the_page_links_the_trackers_prefilled_form(runs, maintainer):
    gap = gap_of("tpu", tid(A, 4))

    page = maintainer.get(f"{PAGE}?gap={gap.pk}&next={GAPS}")

    body = text(page)
    assert "Create in" not in body
    link = page.context["new_issue_url"]
    base, query = link.split("?")
    assert base == "https://github.com/pytorch/xla/issues/new"
    fields = urllib.parse.parse_qs(query)
    assert fields["title"] == [
        "[tpu] test/ops/test_a.py::TestA::test_a4 error: RuntimeError: device lost"
    ]
    assert "| [`test/ops/test_a.py::TestA::test_a4`](" in fields["body"][0]
    assert "while passing on cpu" in fields["body"][0]
    html = page.content.decode()
    assert 'name="to" value="tracker"' in html
    # The form comes first: the subject's table may hold hundreds of rows.
    assert html.index('id="issue-draft"') < html.index('id="issue-gaps"')


def test_the_trackers_page_opens_with_the_title_body_and_labels_as_edited(runs, maintainer):
    gap = gap_of("tpu", tid(A, 4))
    draft = maintainer.get(f"{PAGE}?gap={gap.pk}&next={GAPS}").context["editor"]
    edited = {"title": "TPU loses the device", "labels": "tpu, flaky", "body": "Seen on v5e."}
    issues = TrackingIssue.objects.count()

    answer = maintainer.post(PAGE, form_data(draft.initial, gap=[gap.pk], to="tracker", **edited))

    assert answer.status_code == 302
    base, query = answer["Location"].split("?")
    assert base == "https://github.com/pytorch/xla/issues/new"
    fields = urllib.parse.parse_qs(query)
    assert fields["title"] == ["TPU loses the device"]
    assert fields["labels"] == ["tpu,flaky"]
    assert fields["body"] == ["Seen on v5e."]
    assert TrackingIssue.objects.count() == issues  # the maintainer files it there


def test_a_maintainer_files_an_issue_for_a_gap_and_it_counts_tracked_at_once(
    runs, maintainer, may_write, xla
):
    gap = gap_of("tpu", tid(A, 4))
    assert not gap.tracked
    draft = maintainer.get(f"{PAGE}?gap={gap.pk}&next={GAPS}").context["editor"]
    assert draft.initial["labels"] == "xla:tpu, parity"

    answer = maintainer.post(
        PAGE,
        {
            "gap": [gap.pk],
            "next": GAPS,
            "title": draft.initial["title"],
            "body": draft.initial["body"] + "\n\nSeen on v5e too.",
            "labels": draft.initial["labels"],
        },
        follow=True,
    )

    (created,) = may_write.seen("POST")
    assert created.headers["authorization"] == "Bearer write-token"
    assert created.body["labels"] == ["xla:tpu", "parity"]
    assert created.body["body"].endswith("Seen on v5e too.")
    issue = TrackingIssue.objects.get(url="https://github.com/pytorch/xla/issues/1")
    assert (issue.state, issue.title) == ("open", draft.initial["title"])
    gap.refresh_from_db()
    assert gap.tracked and gap.triage.issue_id == issue.pk and gap.triage.created_by
    page = text(answer)
    assert "Filed https://github.com/pytorch/xla/issues/1 and linked it to 1 gap(s)" in page
    assert f"pytorch/xla#1 {issue.title[:40]}" in page  # the gaps page names it, with its title


def test_one_issue_for_the_selected_gaps(runs, maintainer, may_write):
    chosen = [gap_of("neuron", tid(B, n)) for n in (2, 3, 4)]

    page = maintainer.get(PAGE, {"gap": [g.pk for g in chosen]})
    draft = page.context["editor"].initial
    assert draft["title"].startswith("[neuron] 3 tests missing")
    maintainer.post(PAGE, form_data(draft, gap=[g.pk for g in chosen]))

    assert len(may_write.seen("POST")) == 1
    triages = Triage.objects.filter(issue__url="https://github.com/pytorch/xla/issues/1")
    assert sorted(t.test.key for t in triages) == [tid(B, n) for n in (2, 3, 4)]
    assert all(gap_of("neuron", tid(B, n)).tracked for n in (2, 3, 4))


def test_an_issue_for_a_skip_reason_on_one_backend_tracks_the_reason(runs, maintainer, may_write):
    reason = Reason.objects.get(text=NEURON)

    draft = maintainer.get(PAGE, {"reason": reason.pk, "backend": "neuron"}).context["editor"]
    maintainer.post(PAGE, form_data(draft.initial, gap=[]))

    triage = Triage.objects.get(issue__url="https://github.com/pytorch/xla/issues/1")
    assert (triage.reason_id, [b.name for b in triage.backends.all()]) == (reason.pk, ["neuron"])
    assert gap_of("neuron", tid(B, 1)).tracked


def test_a_tracker_refusal_files_nothing_and_says_so(runs, maintainer, may_write):
    gap = gap_of("tpu", tid(A, 4))
    draft = maintainer.get(PAGE, {"gap": gap.pk}).context["editor"].initial
    may_write.script(Scripted(502, {}, {"message": "Bad gateway"}))

    page = maintainer.post(PAGE, form_data(draft, gap=[gap.pk]))

    assert page.status_code == 200  # the draft again, to try once more or open the tracker
    assert "Not filed: github.com answered 502" in text(page)
    assert not Triage.objects.exists() and not gap_of("tpu", tid(A, 4)).tracked


def test_only_maintainers_file_issues(runs, client, viewer, maintainer):
    gap = gap_of("tpu", tid(A, 4))

    assert client.get(PAGE, {"gap": gap.pk}).status_code == 302  # to the login page
    assert viewer.get(PAGE, {"gap": gap.pk}).status_code == 403
    assert viewer.post(PAGE, {"gap": [gap.pk], "title": "x", "body": "y"}).status_code == 403
    assert "File an issue" not in text(viewer.get(GAPS))
    gaps_page = text(maintainer.get(GAPS))
    assert "File an issue for the selected gaps" in gaps_page
    assert f"{PAGE}?gap={gap.pk}&next=" in gaps_page


def test_nothing_chosen_sends_back_with_a_message(runs, maintainer):
    answer = maintainer.get(PAGE, {"next": GAPS}, follow=True)

    assert answer.redirect_chain[-1][0] == GAPS
    assert "Nothing to file an issue about" in text(answer)
