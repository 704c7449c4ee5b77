"""The triage queue's page and its bulk exemption (``parity.dashboard.views.triage_queue``,
``triage_views.queue_exempt``), the gaps list filtered to a group, and one issue filed for a
file group. The browser tests (tests/browser/test_queue.py) read the same on the demo."""

import re

import pytest

from parity.models import Gap, Reason, Triage
from tests.parity.dashboard.conftest import ISSUES, text
from tests.parity.dashboard_scenario import NEURON, A, B, tid

P = "/p/pytorch-xla"
QUEUE = f"{P}/queue/"
EXEMPT = f"{P}/queue/exempt/"


def states(backend: str, file: str) -> set[tuple[bool, bool]]:
    """(tracked, intended) of ``backend``'s open gaps in ``file``."""
    gaps = Gap.objects.filter(is_open=True, backend__name=backend, test__file=file)
    return set(gaps.values_list("tracked", "intended"))


def words(html: str) -> str:
    """What a reader reads of ``html`` (``text``'s output): no tags, single spaces."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace(" :", ":").replace(" ;", ";")


def test_readers_see_the_groups_and_no_forms(client, viewer, runs):
    body = text(client.get(QUEUE))
    assert "neuron: 3 tests missing, in 1 file; 1 untracked reason" in words(body)
    assert f'data-backend="neuron" data-file="{B}" data-gaps="4"' in body
    assert "3 missing" in body and "1 skipped" in body
    assert 'id="queue-exempt"' not in body and 'name="group"' not in body
    assert viewer.post(EXEMPT, {"group": [f"neuron::{B}"], "kind": "intended"}).status_code == 403
    assert states("neuron", B) == {(False, False)}


def test_a_maintainer_exempts_ticked_groups_in_one_step(maintainer, runs):
    reason = Reason.objects.get(text=NEURON)
    page = text(maintainer.get(QUEUE))
    assert f'value="neuron::{B}"' in page and 'value="gpu::#' in page

    answer = maintainer.post(
        EXEMPT,
        {
            "group": [f"neuron::{B}", f"gpu::{A}", f"neuron::#{reason.pk}", f"neuron::{B}"],
            "kind": "tracked",
            "issue_url": f"{ISSUES}99",
            "next": QUEUE,
        },
        follow=True,
    )

    assert "3 group(s) exempted: linked to its issue" in text(answer)
    assert states("neuron", B) == {(True, False)}
    assert states("gpu", A) == {(True, False)}
    triages = Triage.objects.filter(issue__url=f"{ISSUES}99").prefetch_related("backends")
    made = {(t.match, t.reason_id, tuple(b.name for b in t.backends.all())) for t in triages}
    assert made == {(B, None, ("neuron",)), (A, None, ("gpu",)), ("", reason.pk, ("neuron",))}
    queue = answer.context["queue"]
    assert ("neuron", B) not in {(g.backend, g.file) for g in queue.by_file.groups}
    assert "neuron" not in {h.backend for h in queue.headlines}


def test_a_refused_group_exempts_none(maintainer, runs):
    answer = maintainer.post(
        EXEMPT, {"group": [f"neuron::{B}", f"gpu::{A}"], "kind": "intended"}, follow=True
    )
    assert "Nothing exempted: Entry 1: An intended exemption needs a short note" in text(answer)
    assert not Triage.objects.exists()
    answer = maintainer.post(EXEMPT, {"group": ["neuron"], "kind": "intended", "note": "x"})
    assert answer.status_code == 302 and not Triage.objects.exists()


@pytest.mark.parametrize("kind", ["file", "reason"])
def test_a_groups_tests_are_the_gaps_list_filtered(client, runs, kind):
    if kind == "file":
        query, expected = f"file={B}", [tid(B, n) for n in (1, 2, 3, 4)]
    else:
        query, expected = f"reason={Reason.objects.get(text=NEURON).pk}", [tid(B, 1)]
    page = client.get(f"{P}/gaps/?open=1&tracked=untracked&backend=neuron&{query}")
    listed = sorted(g.test.key for g in page.context["page"].new.object_list)
    assert listed == expected
    assert "Only the tests of" in text(page)


def test_one_issue_for_a_file_group_tracks_the_file_on_its_backend(
    maintainer, runs, fake_tracker, settings
):
    settings.PARITY_TRACKER_WRITE_TOKENS = {"github.com": fake_tracker.write_token}
    page = maintainer.get(f"{P}/file-issue/", {"file": B, "backend": "neuron", "next": QUEUE})
    subject = page.context["subject"]
    assert sorted(g.test for g in subject.gaps) == [tid(B, n) for n in (1, 2, 3, 4)]
    draft = page.context["editor"].initial
    assert draft["title"].startswith(f"[neuron] {B}: 4 tests")
    assert draft["body"].endswith(f"{P}/gaps/?open=1&backend=neuron&file=test%2Fops%2Ftest_b.py")

    fields = {k: "" if v is None else v for k, v in draft.items()}
    answer = maintainer.post(f"{P}/file-issue/", fields, follow=True)

    assert len(fake_tracker.seen("POST")) == 1
    assert f"linked it to {B} on neuron" in text(answer)
    triage = Triage.objects.get(issue__url="https://github.com/pytorch/xla/issues/1")
    assert (triage.match, [b.name for b in triage.backends.all()]) == (B, ["neuron"])
    assert states("neuron", B) == {(True, False)}
