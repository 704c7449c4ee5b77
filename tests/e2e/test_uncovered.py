"""An exemption that expired since the backend's previous run, through the live stack (issue 45):
the client parity serves uploads the next run with ``--gate``; the gap the exemption covered is
untracked now though no run opened it, so the gate exits non-zero naming the exemption and why."""

import datetime

import pytest
from django.db.models import F

from parity.models import CurrentOutcome, Run, Triage
from parity.services.triage import TriageRequest, triage_create, triages_expire
from tests.e2e.test_run_manifest import current_run_is
from tests.e2e.test_variants import ISSUE, ci, reports, served_client  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_run_after_an_exemption_expired_fails_the_gate_naming_it(
    live,
    project,
    served_client,  # noqa: F811
    tmp_path,
):
    exemption = triage_create(
        project=project,
        request=TriageRequest(
            kind="tracked", backends=["tpu"], match="test/a.py::TestA::test_2", issue_url=ISSUE,
            note="x", expires_on=datetime.date(2099, 1, 1),
        ),
    )  # fmt: skip
    upload = ["upload", "--complete", "--wait", "--gate"]
    for n, backend, fails in ((1, "cpu", "cpu"), (2, "tpu", "rocm")):
        done = ci(live, project, served_client, *upload, "--commit", str(n) * 40,
                  "--backend", backend, reports(tmp_path / f"{backend}-{n}", fails))  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr  # tpu's failure: tracked
    current_run_is(project, "tpu", Run.objects.get(backend__name="tpu").key)

    # Ten days pass (the client sends no start time: the runs so far are moved back, and the
    # reference's tests with them), and the exemption's expiry day falls between: the beat task
    # finds it expired before tpu's next run.
    ago = datetime.timedelta(days=10)
    Run.objects.filter(project=project).update(started_at=F("started_at") - ago)
    CurrentOutcome.objects.filter(test__project=project).update(since=F("since") - ago)
    expired_on = datetime.datetime.now(datetime.UTC).date() - datetime.timedelta(days=5)
    Triage.objects.filter(pk=exemption.pk).update(expires_on=expired_on)
    triages_expire()
    done = ci(live, project, served_client, *upload, "--commit", "3" * 40, "--backend", "tpu",
              reports(tmp_path / "tpu-3", "rocm"))  # fmt: skip

    said = done.stdout + done.stderr
    assert done.returncode != 0, said
    assert "NOT OK" in said and "uncovered 1" in said, said
    assert f"#{exemption.pk} (tracked)" in said and f"expired {expired_on}" in said, said
    assert "test/a.py::TestA::test_2" in said
