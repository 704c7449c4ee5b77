"""A conditioned exemption through runs uploaded with attributes: ``rocm < 7.14`` on the rocm
family tracks a failing test of its variant while it runs ROCm 7.1; after the upgrade to 7.14
the failure is an untracked gap, and once the test passes the exemption reads lapsed, to be
removed. The recompute's ``triages.lapses`` step and the triage services keep ``TriageLapse``."""

import datetime
import json

import pytest

from parity.engine.lapses import lapses_write
from parity.models import (
    Backend,
    BackendState,
    ExemptionRemoval,
    Gap,
    Run,
    Snapshot,
    Triage,
    TriageLapse,
)
from parity.result_reads.verdict import run_verdict
from parity.selectors.exemptions import exemptions_page
from parity.selectors.manifest import manifest_build
from parity.services.triage import TriageRejected, TriageRequest, triage_create, triage_save
from tests.parity.conftest import commit_of, run_xml

PASSING = "test/a.py::TestA::test_1"
FLAKY = "test/a.py::TestA::test_2"
FAILS = {PASSING: "passed", FLAKY: ("failed", "HIP error")}
PASSES = {PASSING: "passed", FLAKY: "passed"}
ISSUE = "https://github.com/pytorch/xla/issues/3456"
CONDITION = "rocm < 7.14"


@pytest.fixture
def send(xla, ingest, eager_errors_propagate):
    Backend.objects.create(project=xla, name="rocm")

    def _send(
        backend: str, cases: dict, *, day: str, attributes: dict | None = None, branch="master"
    ) -> int:
        response = ingest(
            ("results.xml", run_xml(cases)),
            backend=backend,
            commit=commit_of(day + branch),
            branch=branch,
            run=f"{day}-{backend}-{branch}",
            complete="true",
            timestamp=f"{day}T12:00:00Z",
            attributes=json.dumps(attributes or {}),
        )
        assert response.status_code == 202, response.content
        return response.json()["run"]

    return _send


def _gap(backend: str = "rocm-gfx942") -> Gap | None:
    return Gap.objects.filter(is_open=True, backend__name=backend, test__name="test_2").first()


def _untracked(backend: Backend) -> int:
    return Snapshot.objects.filter(backend=backend).order_by("-at", "-pk").first().untracked


def _exemption(project) -> Triage:
    return triage_create(
        project=project,
        request=TriageRequest(
            kind="tracked",
            backends=["rocm"],
            match=FLAKY,
            issue_url=ISSUE,
            note="needs ROCm 7.14",
            condition=CONDITION,
        ),
    )


def _lapse_note(project, triage: Triage) -> str:
    page = exemptions_page(project=project, filters={}, files_backend=None)
    return next(t.lapse for t in page.triages.object_list if t.pk == triage.pk)


def test_an_exemption_for_rocm_before_7_14_lapses_after_the_upgrade(xla, send):
    send("cpu", PASSES, day="2026-05-01")
    send("rocm", FAILS, day="2026-05-01", attributes={"arch": "gfx942", "rocm": "7.1"})
    variant = Backend.objects.get(name="rocm-gfx942")
    exemption = _exemption(xla)

    assert (_gap().triage_id, _gap().tracked) == (exemption.pk, True)
    assert _untracked(variant) == 0
    assert not TriageLapse.objects.exists() and not exemption.stale
    assert _lapse_note(xla, exemption) == ""

    # The upgrade: the test still fails, and the exemption no longer covers it.
    send("rocm", FAILS, day="2026-05-02", attributes={"arch": "gfx942", "rocm": "7.14"})
    assert (_gap().triage_id, _gap().tracked) == (None, False)
    assert _untracked(variant) == 1
    assert list(TriageLapse.objects.values_list("triage_id", "backend_id")) == [
        (exemption.pk, variant.pk)
    ]
    assert manifest_build(project=xla, backend=variant).exemptions == []
    old_rocm = manifest_build(project=xla, backend=variant, attributes={"rocm": "7.1"})
    assert [e.id for e in old_rocm.exemptions] == [exemption.pk]

    # It passes at 7.14: nothing left to exempt, and the page says the exemption can go.
    send("rocm", PASSES, day="2026-05-03", attributes={"arch": "gfx942", "rocm": "7.14"})
    exemption.refresh_from_db()
    assert _gap() is None and exemption.stale
    assert _lapse_note(xla, exemption) == (
        "lapsed: rocm < 7.14 holds on no current run of the backends it names "
        "(rocm-gfx942: rocm=7.14); remove it"
    )


def test_a_downgrade_brings_the_exemption_back(xla, send):
    send("cpu", PASSES, day="2026-05-01")
    send("rocm", FAILS, day="2026-05-01", attributes={"arch": "gfx942", "rocm": "7.14"})
    exemption = _exemption(xla)
    assert (_gap().triage_id, _gap().tracked) == (None, False)  # lapsed from the start
    # Lapsed, not stale: its test still fails (the page says lapsed, not "its tests pass now").
    assert not Triage.objects.get(pk=exemption.pk).stale

    send("rocm", FAILS, day="2026-05-02", attributes={"arch": "gfx942", "rocm": "7.2"})
    assert (_gap().triage_id, _gap().tracked) == (exemption.pk, True)
    assert not TriageLapse.objects.exists()
    assert not Triage.objects.get(pk=exemption.pk).stale


def test_a_lapse_on_one_arch_leaves_the_other_tracked_and_the_exemption_in_force(xla, send):
    send("cpu", PASSES, day="2026-05-01")
    send("rocm", FAILS, day="2026-05-01", attributes={"arch": "gfx942", "rocm": "7.14"})
    send("rocm", FAILS, day="2026-05-01", attributes={"arch": "gfx90a", "rocm": "7.1"})
    exemption = _exemption(xla)

    assert _gap("rocm-gfx942").tracked is False
    assert _gap("rocm-gfx90a").tracked is True
    assert _lapse_note(xla, exemption) == ""  # it still holds on gfx90a


def test_changing_the_condition_applies_at_once(xla, send):
    send("cpu", PASSES, day="2026-05-01")
    send("rocm", FAILS, day="2026-05-01", attributes={"arch": "gfx942", "rocm": "7.14"})
    exemption = _exemption(xla)
    assert _gap().tracked is False

    exemption.condition = "rocm <= 7.14 and arch in (gfx942, gfx90a)"
    triage_save(triage=exemption, backends=exemption.backends.all())
    assert _gap().tracked is True and not TriageLapse.objects.exists()

    exemption.condition = ""
    triage_save(triage=exemption, backends=exemption.backends.all())
    assert _gap().tracked is True


def test_a_project_with_no_conditioned_triage_writes_no_lapse_and_changes_nothing(xla, send):
    send("cpu", PASSES, day="2026-05-01")
    send("rocm", FAILS, day="2026-05-01", attributes={"arch": "gfx942", "rocm": "7.1"})

    assert lapses_write(project_id=xla.pk) == set()
    assert not TriageLapse.objects.exists()


@pytest.mark.parametrize(("current", "pull_request"), [("7.14", "7.1"), ("7.1", "7.14")])
def test_a_pull_request_s_verdict_holds_conditions_to_its_own_release(
    xla, send, current, pull_request
):
    """A pull request's run on a machine at another ROCm release than the backend's current
    run: the manifest its CI fetched with its attributes exempted the test at 7.1 and not at
    7.14, and its verdict judges the gap it opens the same way."""
    send("cpu", PASSES, day="2026-05-01")
    send("rocm", PASSES, day="2026-05-01", attributes={"arch": "gfx942", "rocm": current})
    exemption = _exemption(xla)
    pr = send("rocm", FAILS, day="2026-05-02", branch="pr-7",
              attributes={"arch": "gfx942", "rocm": pull_request})  # fmt: skip
    variant = Backend.objects.get(name="rocm-gfx942")
    assert BackendState.objects.get(backend=variant).current_run_id != pr

    verdict = run_verdict(run=Run.objects.get(pk=pr))

    assert [(g.test, g.tracked) for g in verdict.gaps] == [(FLAKY, pull_request == "7.1")]
    assert verdict.ok is (pull_request == "7.1")
    assert [e.id for e in manifest_build(
        project=xla, backend=variant, attributes={"rocm": pull_request}
    ).exemptions] == ([exemption.pk] if pull_request == "7.1" else [])  # fmt: skip


@pytest.mark.parametrize(
    ("condition", "fault"),
    [
        ("rocm < latest", "ordering compares versions"),
        ("rocm <", "ends too early (at character 7)"),
        ("arch in gfx942", "Expected '(', found 'gfx942' (at character 9)"),
    ],
)
def test_an_unreadable_condition_is_refused_naming_where(xla, condition, fault):
    with pytest.raises(TriageRejected) as refused:
        triage_create(
            project=xla,
            request=TriageRequest(kind="intended", match=FLAKY, note="x", condition=condition),
        )
    assert refused.value.field == "condition"
    assert fault in str(refused.value)
    assert not Triage.objects.exists()


def test_the_verdict_of_the_upgrade_reports_the_gap_it_uncovered(xla, send):
    """Issue 45 finding 3: the gap was tracked at 7.1 and is untracked at 7.14 though no gap
    opened: the verdict lists it as uncovered, is not ok (so ``--gate`` fails), and the
    exemption is lapsed, not stale (its test still fails)."""
    from parity.clients.parity_ci import verdict_headline, verdict_table

    send("cpu", PASSES, day="2026-05-01")
    send("rocm", FAILS, day="2026-05-01", attributes={"arch": "gfx942", "rocm": "7.1"})
    exemption = _exemption(xla)
    before = Run.objects.get(
        pk=send("rocm", FAILS, day="2026-05-02", attributes={"arch": "gfx942", "rocm": "7.1"})
    )
    assert run_verdict(run=before).ok  # still covered at 7.1: nothing uncovered

    upgraded = Run.objects.get(
        pk=send("rocm", FAILS, day="2026-05-03", attributes={"arch": "gfx942", "rocm": "7.14"})
    )
    verdict = run_verdict(run=upgraded)
    assert verdict.opened["untracked"] == 0
    assert verdict.opened["uncovered"] == 1
    assert [(g.test, g.state, g.exemption, g.condition) for g in verdict.uncovered] == [
        (FLAKY, "failed", exemption.pk, CONDITION)
    ]
    assert not verdict.ok
    exemption.refresh_from_db()
    assert not exemption.stale

    from parity.api.serializers import VerdictSerializer

    document = VerdictSerializer(verdict).data
    assert document["ok"] is False and document["opened"]["uncovered"] == 1
    headline = verdict_headline(document)
    assert "NOT OK" in headline and "uncovered 1" in headline
    assert FLAKY in verdict_table(document)


def test_a_run_still_at_7_1_uncovers_nothing(xla, send):
    send("cpu", PASSES, day="2026-05-01")
    send("rocm", FAILS, day="2026-05-01", attributes={"arch": "gfx942", "rocm": "7.14"})
    _exemption(xla)
    # The downgrade covers the gap again: nothing uncovered, the gap was no opened one either.
    back = Run.objects.get(
        pk=send("rocm", FAILS, day="2026-05-02", attributes={"arch": "gfx942", "rocm": "7.1"})
    )
    verdict = run_verdict(run=back)
    assert verdict.uncovered == [] and verdict.ok


# --- Expired and removed since the previous run (issue 45) --------------------------------------

EXPIRY = "2026-12-01"  # after the runs' May days, before today (the suite runs on later days)


def _plain_exemption(project, **fields) -> Triage:
    return triage_create(
        project=project,
        request=TriageRequest(
            kind="tracked", backends=["rocm"], match=FLAKY, issue_url=ISSUE, note="x", **fields
        ),
    )


def _covered_then_run(send) -> tuple[Run, Run]:
    """A baseline where the exemption covered the failing test, then the next run."""
    send("cpu", PASSES, day="2026-05-01")
    before = Run.objects.get(pk=send("rocm", FAILS, day="2026-05-02", attributes=GFX942))
    return before, Run.objects.get(pk=send("rocm", FAILS, day="2026-05-03", attributes=GFX942))


GFX942 = {"arch": "gfx942"}


def test_an_exemption_that_expired_since_the_previous_run_uncovers_its_gaps(xla, send):
    """Its expiry day passed after the previous run: the gap it covered is untracked now, though
    no gap opened. The verdict lists it under uncovered with why, and ``--gate`` fails on it."""
    from parity.api.serializers import VerdictSerializer
    from parity.clients.parity_ci import verdict_headline, verdict_table
    from parity.services.triage import triages_expire

    exemption = _plain_exemption(xla, expires_on=datetime.date(2099, 1, 1))
    before, run = _covered_then_run(send)
    assert run_verdict(run=run).ok  # not expired yet: nothing uncovered
    Triage.objects.filter(pk=exemption.pk).update(expires_on=datetime.date.fromisoformat(EXPIRY))
    triages_expire()

    verdict = run_verdict(run=run)
    assert [(g.test, g.exemption, g.cause, g.why) for g in verdict.uncovered] == [
        (FLAKY, exemption.pk, "expired", f"expired {EXPIRY}")
    ]
    assert verdict.opened["uncovered"] == 1 and not verdict.ok
    document = VerdictSerializer(verdict).data
    assert "uncovered 1" in verdict_headline(document)
    assert f"expired {EXPIRY}" in verdict_table(document)
    # Expired before the baseline ran: the baseline's verdict said so; this run's says nothing.
    later = Run.objects.get(pk=send("rocm", FAILS, day="2026-05-04", attributes=GFX942))
    Triage.objects.filter(pk=exemption.pk).update(expires_on=datetime.date(2026, 5, 2))
    assert run_verdict(run=later).uncovered == []
    assert before.pk != run.pk


def test_an_exemption_deleted_since_the_previous_run_uncovers_its_gaps(
    xla, send, django_user_model
):
    from parity.api.serializers import VerdictSerializer
    from parity.clients.parity_ci import verdict_table
    from parity.services.triage import triages_delete

    alice = django_user_model.objects.create(username="alice")
    exemption = _plain_exemption(xla)
    _before, run = _covered_then_run(send)
    pk = exemption.pk
    triages_delete(triages=[exemption], user=alice)

    verdict = run_verdict(run=run)
    today = datetime.datetime.now(datetime.UTC).date()
    assert [(g.test, g.exemption, g.cause, g.why) for g in verdict.uncovered] == [
        (FLAKY, pk, "removed", f"removed by alice on {today}")
    ]
    assert not verdict.ok
    assert f"removed by alice on {today}" in verdict_table(VerdictSerializer(verdict).data)
    # Removed before the previous run started: that run's verdict said so, not this one's.
    ExemptionRemoval.objects.update(
        removed_at=datetime.datetime(2026, 5, 3, 6, tzinfo=datetime.UTC)
    )
    later = Run.objects.get(pk=send("rocm", FAILS, day="2026-05-04", attributes=GFX942))
    assert run_verdict(run=later).uncovered == []
    assert [g.cause for g in run_verdict(run=run).uncovered] == ["removed"]


def test_a_declaration_set_aside_since_the_previous_run_uncovers_its_gaps(
    xla, send, django_user_model
):
    from parity.services.triage import declaration_override

    bob = django_user_model.objects.create(username="bob")
    declaration = triage_create(
        project=xla,
        request=TriageRequest(kind="not_applicable", backends=["rocm"], match=FLAKY, note="x"),
    )
    _before, run = _covered_then_run(send)
    assert run_verdict(run=run).uncovered == []
    declaration_override(triage=declaration, overridden=True, user=bob)
    today = datetime.datetime.now(datetime.UTC).date()
    assert [(g.cause, g.why) for g in run_verdict(run=run).uncovered] == [
        ("removed", f"set aside by bob on {today}")
    ]
    declaration_override(triage=declaration, overridden=False, user=bob)  # restored: covered
    assert run_verdict(run=run).uncovered == []
