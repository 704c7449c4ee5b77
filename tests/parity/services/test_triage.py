"""Triage services beyond the API's checks: expiry re-applied by the beat task, and the rules
only services enforce."""

import datetime

import pytest
from django.db.models import RestrictedError
from django.utils import timezone

from parity.models import Gap, Snapshot, TrackingIssue, Triage
from parity.services.triage import TriageRejected, TriageRequest, triage_create
from parity.tasks import triages_expire

A = "test/a.py::TestA::"
ISSUE = "https://github.com/pytorch/xla/issues/1"


@pytest.fixture
def gap(upload_run):
    upload_run("cpu", {f"{A}test_1": "passed"}, day="2026-04-01")
    upload_run("tpu", {f"{A}test_1": ("skipped", "later")}, day="2026-04-01")
    return Gap.objects.get(is_open=True)


def test_the_beat_task_untracks_a_gap_once_its_exemption_expired(gap, xla):
    today = timezone.now().date()
    request = TriageRequest(kind="tracked", match="test/a.py", issue_url=ISSUE, expires_on=today)
    triage = triage_create(project=xla, request=request)
    gap.refresh_from_db()
    assert (gap.triage_id, gap.tracked) == (triage.pk, True)

    Triage.objects.filter(pk=triage.pk).update(expires_on=today - datetime.timedelta(days=1))
    triages_expire.delay()

    gap.refresh_from_db()
    triage.refresh_from_db()
    assert (gap.triage_id, gap.tracked, triage.expired) == (None, False, True)
    assert (
        Snapshot.objects.get(backend=gap.backend, run=gap.backend.state.current_run).untracked == 1
    )


@pytest.mark.parametrize(
    ("request_fields", "field", "says"),
    [
        ({"kind": "tracked", "issue_url": ISSUE, "expires_on": datetime.date(2020, 1, 1)},
         "expires_on", "has already passed"),
        ({"kind": "quarantine", "issue_url": ISSUE, "reason": None}, "kind", "not a skip reason"),
        ({"kind": "intended", "note": "x", "match": "**"}, "match", "names every file"),
        ({"kind": "intended", "note": "x", "backends": ["ipu"]}, "backends", "Unknown backend"),
    ],
)  # fmt: skip
def test_rules_only_services_know_are_enforced(gap, xla, request_fields, field, says):
    fields = {"match": "test/a.py", **request_fields}
    if "reason" in fields:
        fields = {**fields, "match": "", "reason": gap.reason_id}

    with pytest.raises(TriageRejected, match=says) as refused:
        triage_create(project=xla, request=TriageRequest(**fields))

    assert refused.value.field == field
    assert not Triage.objects.exists()


def test_a_project_with_tracked_exemptions_can_be_deleted_but_not_their_issue(gap, xla):
    triage = triage_create(
        project=xla, request=TriageRequest(kind="tracked", match="test/a.py", issue_url=ISSUE)
    )

    with pytest.raises(RestrictedError):
        triage.issue.delete()
    xla.delete()

    assert not Triage.objects.exists() and not TrackingIssue.objects.exists()
