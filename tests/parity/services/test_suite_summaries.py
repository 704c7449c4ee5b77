"""The stored suites matrix (parity.services.suite_summaries, docs/suites.md): a seeded history of
a suite's runs, each sent through the upload API, moves its tier by the rules as configured,
without a flap at a threshold; a run's green is the CI gate's ok; the verdict gates by the
tier; each move is recorded and announced once; the summary written run by run is the one a
rebuild replays; the digest lists the week's moves."""

import datetime

import pytest
from django.utils import timezone

from parity.digest.render import digest_render
from parity.models import SuiteSummary, SuiteTierMove, WebhookEndpoint, WebhookNotice
from parity.models.runs import Run
from parity.pure.weeks import Week
from parity.result_reads import run_verdict
from parity.selectors import suite_matrix
from parity.selectors.digest import digest_content
from parity.services.suite_summaries import suite_summaries_rebuild
from parity.services.suites import SuiteOnBackend, suite_map_load, suite_save
from tests.junit_builder import Case, junit_xml

pytestmark = pytest.mark.django_db

NOW = timezone.now()
SUITE = "tpu-tests"


def xml(*outcomes: str) -> tuple[str, bytes]:
    cases = [Case("TestA", f"test_{i}", o, file="test/a.py") for i, o in enumerate(outcomes)]
    return ("TEST-a.xml", junit_xml(*cases))


def send(ingest, backend, day, *outcomes, suite=SUITE, key=None) -> Run:
    started = NOW - datetime.timedelta(days=day)
    response = ingest(
        xml(*outcomes),
        backend=backend,
        commit=f"{day:040d}",
        run=key or f"{backend}-{day}",
        timestamp=started.isoformat(),
        complete="true",
        **({"suite": suite} if suite else {}),
    )
    assert response.status_code in (200, 202), response.content
    return Run.objects.get(backend__name=backend, key=key or f"{backend}-{day}")


def stored(backend="tpu") -> SuiteSummary:
    return SuiteSummary.objects.get(backend__name=backend, suite=SUITE)


def summary_fields(summary: SuiteSummary) -> tuple:
    return (
        summary.last_run_id,
        summary.recent,
        summary.tier,
        summary.tier_since,
        summary.greens,
        summary.reds,
    )


LETTER = {"blocking": "b", "informing": "i", "broken": "x"}


def test_a_seeded_history_moves_the_tier_by_the_rules_and_the_gate_follows_it(project, ingest):
    suite_save(
        project=project,
        name=SUITE,
        backends=[SuiteOnBackend("tpu")],
        tiers={"promote_after": 3, "demote_after": 2, "recover_after": 2},
    )
    WebhookEndpoint.objects.create(project=project, url="http://127.0.0.1:9/hook")
    send(ingest, "cpu", 30, "passed", "passed", suite="")  # the reference passes both tests
    # G: both pass. R: a test the reference passes fails, one the run before did not fail
    # (a gap it opens, untracked: the gate fails). Alternation at every threshold moves
    # nothing; three greens promote; one red does not demote a blocking suite, two do; two
    # greens recover a broken one.
    marks = "GRGRGGGRGRRGG"
    expected = "iiiiiibbbbxxi"
    along, gates, oks, failing = "", [], [], 0
    for n, mark in enumerate(marks):
        if mark == "G":
            outcomes = ("passed", "passed")
        else:
            outcomes = ("failed", "passed") if failing % 2 == 0 else ("passed", "failed")
            failing += 1
        run = send(ingest, "tpu", len(marks) - n, *outcomes)
        along += LETTER[stored().tier]
        verdict = run_verdict(run=run)
        gates.append(verdict.gates)
        oks.append(verdict.ok)
        assert [(s.name, s.tier) for s in verdict.suites] == [(SUITE, stored().tier)]
    assert along == expected
    # A run's green is the gate's ok; the verdict gates only where the suite is blocking.
    assert oks == [m == "G" for m in marks]
    assert gates == [letter == "b" for letter in expected]
    # An informing suite's red run reports: not ok, and not a gate (CI passes).
    assert (oks[1], gates[1]) == (False, False)
    # Each move once, announced once.
    moves = list(SuiteTierMove.objects.order_by("at").values_list("before", "after"))
    assert moves == [
        ("informing", "blocking"),
        ("blocking", "broken"),
        ("broken", "informing"),
    ]
    notices = WebhookNotice.objects.filter(event="suite_tier_changed").order_by("pk")
    assert [n.payload["move"] for n in notices] == ["promoted", "demoted", "recovered"]
    assert {n.payload["suite"] for n in notices} == {SUITE}

    # Written run by run, the summary is the one a replay of its runs gives.
    incremental = summary_fields(stored())
    assert stored().recent[0]["run_id"] == incremental[0]
    assert suite_summaries_rebuild(project=project) == 1
    assert summary_fields(stored()) == incremental
    assert SuiteTierMove.objects.count() == 3  # replayed, not recorded twice
    assert notices.count() == 3  # nor announced again

    # The matrix reads the summary: tier and health.
    rows = suite_matrix(project=project).rows
    cell = next(c for r in rows for c in r.cells if c.backend == "tpu")
    assert (cell.cell.tier, cell.cell.health.runs, cell.cell.health.greens) == ("informing", 5, 3)

    # The digest of the week of the demotion lists it under "Suite tiers".
    demoted = SuiteTierMove.objects.get(after="broken")
    content = digest_content(project=project, week=Week.of(demoted.at))
    assert ("tpu", SUITE, "demoted") in [(m.backend, m.suite, m.move) for m in content.tier_moves]
    rendered = digest_render(content)
    assert "Suite tiers" in rendered.html and f"tpu: {SUITE} demoted" in rendered.text


def test_a_late_run_older_than_the_stored_ones_is_replayed_into_place(project, ingest):
    suite_save(project=project, name=SUITE, tiers={"promote_after": 2})
    send(ingest, "cpu", 30, "passed", "passed", suite="")
    send(ingest, "tpu", 3, "passed", "passed")
    send(ingest, "tpu", 1, "passed", "passed")  # two greens: blocking
    assert stored().tier == "blocking"
    # A run CI started before both arrives last, timed out: red, and the oldest.
    ingest(
        xml("passed", "passed"),
        backend="tpu",
        commit="9" * 40,
        run="late",
        timestamp=(NOW - datetime.timedelta(days=5)).isoformat(),
        complete="true",
        suite=SUITE,
        run_manifest='{"files": [{"file": "test/a.py", "started": true, "timed_out": true}]}',
    )
    late = summary_fields(stored())
    assert [r["timed_out_files"] for r in stored().recent] == [0, 0, 1]  # newest first
    suite_summaries_rebuild(project=project)
    assert summary_fields(stored()) == late
    assert stored().tier == "blocking"  # red, then two greens


def test_the_map_names_a_backends_equivalent(project, ingest, client):
    suite_map_load(
        project=project,
        suites={
            "kernels": {
                "backends": {"gpu": "kernels", "tpu": "kernels-tpu"},
                "equivalent": {"tpu": "gpu"},
            }
        },
    )
    send(ingest, "tpu", 0, "passed", suite="kernels-tpu")
    row = next(r for r in suite_matrix(project=project).rows if r.name == "kernels")
    equivalent = {c.backend: c.equivalent for c in row.cells}
    assert equivalent == {"cpu": "", "gpu": "", "tpu": "gpu", "neuron": ""}
    # The page says it, and its link compares the two backends' tests.
    html = client.get(f"/p/{project.slug}/suites/").content.decode()
    assert 'data-equivalent="gpu"' in html
    assert "/matrix/pair/?a=gpu&amp;b=tpu" in html
    api = client.get(f"/api/v1/projects/{project.slug}/suites/").json()
    cells = {c["backend"]: c for r in api["suites"] for c in r["cells"] if r["name"] == "kernels"}
    assert cells["tpu"]["equivalent"] == "gpu"
    with pytest.raises(Exception, match="equivalent"):
        suite_map_load(project=project, suites={"kernels": {"equivalent": {"tpu": "tpu"}}})


def test_a_run_still_in_the_queue_reads_pending_over_the_stored_summary(
    project, ingest, api, django_capture_on_commit_callbacks
):
    """The summary holds finished runs only: a newer run whose upload is not ingested yet is
    read from the queue, and its cell says pending until it finishes."""
    from tests.uploads import post_upload

    send(ingest, "tpu", 1, "passed")
    with django_capture_on_commit_callbacks(execute=False):  # the worker has not run it yet
        queued = post_upload(
            api,
            xml("passed"),
            backend="tpu",
            commit="7" * 40,
            run="queued",
            suite=SUITE,
            complete="true",
        )
    assert queued.status_code == 202, queued.content
    cell = next(
        c for r in suite_matrix(project=project).rows for c in r.cells if c.backend == "tpu"
    )
    assert cell.cell.status == "pending"
    assert cell.cell.health.runs == 1  # the finished one; the pending run has no outcome yet
