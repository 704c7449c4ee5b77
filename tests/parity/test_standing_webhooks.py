"""The ``untracked_gaps`` webhook reads the one standing (issue 45): a crashed file's tests are
lost to infrastructure, never untracked gaps, so their coming back closes nothing; and a gap an
upgrade uncovered (a conditioned exemption that lapsed) is announced, as the verdict lists it."""

import json

from parity.models import Backend
from parity.services.triage import TriageRequest, triage_create
from tests.parity.conftest import commit_of, run_xml
from tests.parity.services.test_webhooks import endpoint, receiver  # noqa: F401 (fixtures)

A = "test/a.py::TestA::test_a"
C1, C2 = "test/c.py::TestC::test_1", "test/c.py::TestC::test_2"
EVERY = {A: "passed", C1: "passed", C2: "passed"}


def _events(got_by) -> list[dict]:
    return [got.body["data"] for got in got_by.received if got.body["event"] == "untracked_gaps"]


def test_a_crashed_files_tests_neither_open_nor_close_untracked_gaps(
    endpoint,  # noqa: F811
    receiver,  # noqa: F811
    upload_run,
    ingest,
):
    endpoint()
    upload_run("cpu", EVERY, day="2026-04-01")
    upload_run("tpu", EVERY, day="2026-04-01")
    crashed = ingest(
        ("tpu.xml", run_xml({A: ("failed", "boom")})),
        backend="tpu",
        commit=commit_of("2026-04-02", "master"),
        branch="master",
        run="tpu-crash",
        complete="true",
        timestamp="2026-04-02T12:00:00Z",
        run_manifest=json.dumps({"files": [{"file": "test/c.py", "signal": "SIGSEGV"}]}),
    )
    assert crashed.status_code == 202, crashed.content
    [opened] = _events(receiver)
    assert (opened["opened_total"], [g["test"] for g in opened["opened"]]) == (1, [A])
    upload_run("tpu", EVERY, day="2026-04-03")  # the file runs again: every test passes
    closing = _events(receiver)[-1]
    assert (closing["opened_total"], closing["closed_total"]) == (0, 1), closing
    assert [g["test"] for g in closing["closed"]] == [A]


def test_a_gap_an_upgrade_uncovered_is_announced(
    xla,
    endpoint,  # noqa: F811
    receiver,  # noqa: F811
    ingest,
    eager_errors_propagate,
):
    Backend.objects.create(project=xla, name="rocm")
    fails = {A: ("failed", "HIP error")}

    def send(backend, cases, day, attributes=None):
        response = ingest(
            ("results.xml", run_xml(cases)),
            backend=backend,
            commit=commit_of(day),
            branch="master",
            run=f"{day}-{backend}",
            complete="true",
            timestamp=f"{day}T12:00:00Z",
            attributes=json.dumps(attributes or {}),
        )
        assert response.status_code == 202, response.content

    send("cpu", {A: "passed"}, "2026-05-01")
    send("rocm", fails, "2026-05-01", {"arch": "gfx942", "rocm": "7.1"})
    triage_create(
        project=xla,
        request=TriageRequest(
            kind="tracked",
            backends=["rocm"],
            match=A,
            issue_url="https://github.com/pytorch/xla/issues/3456",
            note="needs ROCm 7.14",
            condition="rocm < 7.14",
        ),
    )
    endpoint()
    send("rocm", fails, "2026-05-02", {"arch": "gfx942", "rocm": "7.14"})
    [event] = _events(receiver)
    assert (event["opened_total"], event["closed_total"], event["uncovered_total"]) == (0, 0, 1)
    assert [g["test"] for g in event["uncovered"]] == [A]


def test_gaps_an_expired_or_removed_exemption_uncovered_are_announced(
    xla,
    endpoint,  # noqa: F811
    receiver,  # noqa: F811
    ingest,
    eager_errors_propagate,
    django_user_model,
):
    """Issue 45: an exemption that expired since the previous run, or one a maintainer removed
    since, uncovers its gaps: the next run's event announces them with why, as the verdict."""
    import datetime

    from parity.models import Triage
    from parity.services.triage import triages_delete, triages_expire

    Backend.objects.create(project=xla, name="rocm")
    fails = {A: ("failed", "HIP error"), C1: ("failed", "HIP error")}

    def send(cases, day):
        response = ingest(
            ("results.xml", run_xml(cases)),
            backend="rocm" if cases is fails else "cpu",
            commit=commit_of(day),
            branch="master",
            run=f"{day}-{'rocm' if cases is fails else 'cpu'}",
            complete="true",
            timestamp=f"{day}T12:00:00Z",
            attributes=json.dumps({"arch": "gfx942"} if cases is fails else {}),
        )
        assert response.status_code == 202, response.content

    send({A: "passed", C1: "passed"}, "2026-05-01")
    expiring, removed = (
        triage_create(
            project=xla,
            request=TriageRequest(
                kind="intended",
                backends=["rocm"],
                match=test,
                note="x",
                expires_on=datetime.date(2099, 1, 1),
            ),
        )  # fmt: skip
        for test in (A, C1)
    )
    send(fails, "2026-05-01")
    Triage.objects.filter(pk=expiring.pk).update(expires_on=datetime.date(2026, 12, 1))
    triages_expire()
    alice = django_user_model.objects.create(username="alice")
    triages_delete(triages=[removed], user=alice)
    endpoint()
    send(fails, "2026-05-02")
    [event] = _events(receiver)
    assert (event["opened_total"], event["uncovered_total"]) == (0, 2)
    today = datetime.datetime.now(datetime.UTC).date()
    assert {(g["test"], g["why"]) for g in event["uncovered"]} == {
        (A, "expired 2026-12-01"),
        (C1, f"removed by alice on {today}"),
    }
