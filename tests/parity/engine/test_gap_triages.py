"""The engine's triage steps alone, on gaps and triages made with the ORM: which triage each
open gap gets (and so tracked/intended), and which triages no open gap matches."""

import datetime

from django.db import connection
from django.utils import timezone
from psycopg2 import sql

from parity.definitions import triage_candidates, triage_picks
from parity.engine.gap_triages import triages_apply, triages_mark_stale
from parity.models import Gap, Outcome, TestCase, TrackingIssue, Triage
from parity.models.sql import model_sql
from parity.pure.globs import key_matches, pattern_literal, pattern_regex, pattern_shape
from parity.pure.normalize.ids import make_key
from tests.parity.engine.rows import (
    backend_of,
    current_set,
    gap_open,
    reason_of,
    run_make,
)
from tests.parity.engine.rows import (
    testcase_of as case_of,
)
from tests.parity.pure.test_globs import CASES, KEYS

A = "test/a.py::TestA::"


def apply(project) -> dict[str, tuple[int | None, bool, bool]]:
    triages_apply(project_id=project.pk, backend_ids=[b.pk for b in project.backends.all()])
    gaps = Gap.objects.filter(is_open=True).order_by("test__name")
    return {g.test.name: (g.triage_id, g.tracked, g.intended) for g in gaps}


def issue(project, n: int = 1) -> TrackingIssue:
    return TrackingIssue.objects.create(project=project, kind="github", key=f"pytorch/xla#{n}")


def triage(project, *, backends=(), **fields) -> Triage:
    """A triage made with the ORM, on ``backends`` (backend rows; none: every backend)."""
    made = Triage.objects.create(project=project, **fields)
    made.backends.set(backends)
    return made


def test_each_gap_gets_the_most_specific_triage_intended_first(project):
    run = run_make(project, "tpu")
    later = reason_of(project, "later")
    odd = reason_of(project, "odd")
    for name in ("t1", "t2", "t3"):
        gap_open(project, "tpu", f"{A}{name}", "skipped", run=run, reason=later)
    gap_open(project, "tpu", f"{A}t4", "skipped", run=run, reason=odd)
    tpu = backend_of(project, "tpu")
    t2, t3, t4 = (Gap.objects.get(test__name=n).test for n in ("t2", "t3", "t4"))
    on_reason = Triage.objects.create(
        project=project, reason=later, kind="tracked", issue=issue(project)
    )
    on_t2 = Triage.objects.create(project=project, test=t2, kind="intended", note="by design")
    on_t3 = triage(project, backends=[tpu], test=t3, kind="tracked", issue=issue(project, 2))
    # Intended wins over a more specific tracked triage.
    triage(project, backends=[tpu], test=t4, kind="tracked", issue=issue(project, 3))
    on_t4 = triage(project, backends=[tpu], reason=odd, kind="intended", note="x")

    assert apply(project) == {
        "t1": (on_reason.pk, True, False),
        "t2": (on_t2.pk, False, True),
        "t3": (on_t3.pk, True, False),
        "t4": (on_t4.pk, False, True),
    }


def test_a_gap_is_tracked_by_its_reasons_issue_without_a_triage(project):
    run = run_make(project, "tpu")
    linked, bare = reason_of(project, "see #1"), reason_of(project, "later")
    gap_open(project, "tpu", f"{A}t1", "skipped", run=run, reason=linked)
    gap_open(project, "tpu", f"{A}t2", "skipped", run=run, reason=bare)
    assert apply(project) == {"t1": (None, False, False), "t2": (None, False, False)}

    linked.issues.add(issue(project))
    assert apply(project) == {"t1": (None, True, False), "t2": (None, False, False)}


def test_a_triage_no_open_gap_matches_is_stale_until_one_does(project):
    run = run_make(project, "tpu")
    for backend in ("cpu", "gpu", "tpu", "neuron"):  # each has run: staleness is known
        current_set(project, backend, {}, run=run)
    gap = gap_open(project, "tpu", f"{A}t1", "skipped", run=run)
    other = gap_open(project, "tpu", f"{A}t2", "skipped", run=run)
    matched = Triage.objects.create(project=project, test=gap.test, kind="intended", note="x")
    Gap.objects.filter(pk=other.pk).update(is_open=False)
    stale = Triage.objects.create(project=project, test=other.test, kind="intended", note="x")
    gpu_only = triage(
        project, backends=[backend_of(project, "gpu")], test=gap.test, kind="intended", note="x"
    )

    triages_mark_stale(project_id=project.pk)
    assert dict(Triage.objects.values_list("pk", "stale")) == {
        matched.pk: False,
        stale.pk: True,
        gpu_only.pk: True,  # the gap is on tpu
    }

    Gap.objects.filter(pk=other.pk).update(is_open=True)
    triages_mark_stale(project_id=project.pk)
    assert Triage.objects.get(pk=stale.pk).stale is False


def test_an_exemption_made_before_its_backends_first_run_is_not_stale(project):
    # No run on neuron yet: the exemption awaits it; once neuron runs and no gap is there, it is.
    test = case_of(project, f"{A}t1")
    neuron = backend_of(project, "neuron")
    exemption = triage(project, backends=[neuron], test=test, kind="intended", note="no fp64")
    everywhere = triage(project, test=test, kind="intended", note="x")
    run = run_make(project, "cpu")
    for backend in ("cpu", "gpu", "tpu"):
        current_set(project, backend, {f"{A}t1": Outcome.PASSED}, run=run)

    triages_mark_stale(project_id=project.pk)
    assert Triage.objects.get(pk=exemption.pk).stale is False
    assert Triage.objects.get(pk=everywhere.pk).stale is False  # neuron is one of its backends

    current_set(project, "neuron", {f"{A}t1": Outcome.PASSED}, run=run_make(project, "neuron"))
    triages_mark_stale(project_id=project.pk)
    assert dict(Triage.objects.values_list("pk", "stale")) == {
        exemption.pk: True,
        everywhere.pk: True,
    }


def pattern(project, match: str, **fields) -> Triage:
    derived = {
        "match_regex": pattern_regex(match),
        "match_literal": pattern_literal(match),
        "match_shape": pattern_shape(match),
    }
    return triage(project, match=match, **derived, **fields)


def test_a_pattern_tracks_the_tests_it_names_and_nothing_of_another_file(project):
    run = run_make(project, "tpu")
    for key in (
        "test/test_ops.py::TestOps::test_add_complex64",
        "test/test_ops.py::TestOps::test_add_float32",
        "test/test_ops.py.orig::TestOps::test_add_complex64",  # another file, same test part
        "test/spmd/test_a.py::TestA::test_x",
        "test/spmd/deep/test_b.py::TestB::test_y",
        "test/spmd_extra/test_c.py::TestC::test_z",
    ):
        gap_open(project, "tpu", key, "skipped", run=run)
    complex64 = pattern(
        project,
        "test/test_ops.py::TestOps::test_*_complex64",
        kind="tracked",
        issue=issue(project),
    )
    spmd = pattern(project, "test/spmd/**", kind="intended", note="no mesh on this backend")

    triages_apply(project_id=project.pk, backend_ids=[b.pk for b in project.backends.all()])

    picked = dict(Gap.objects.values_list("test__key", "triage_id"))
    assert picked == {
        "test/test_ops.py::TestOps::test_add_complex64": complex64.pk,
        "test/test_ops.py::TestOps::test_add_float32": None,
        "test/test_ops.py.orig::TestOps::test_add_complex64": None,
        "test/spmd/test_a.py::TestA::test_x": spmd.pk,
        "test/spmd/deep/test_b.py::TestB::test_y": spmd.pk,
        "test/spmd_extra/test_c.py::TestC::test_z": None,
    }


def test_a_triage_applies_on_the_backends_it_names_only(project):
    tpu_run, gpu_run = run_make(project, "tpu"), run_make(project, "gpu")
    gap_open(project, "tpu", f"{A}t1", "skipped", run=tpu_run)
    gap_open(project, "gpu", f"{A}t1", "skipped", run=gpu_run)
    gap_open(project, "neuron", f"{A}t1", "skipped", run=run_make(project, "neuron"))
    on_two = pattern(
        project,
        "test/a.py",
        backends=[backend_of(project, "tpu"), backend_of(project, "neuron")],
        kind="intended",
        note="x",
    )

    triages_apply(project_id=project.pk, backend_ids=[b.pk for b in project.backends.all()])

    picked = dict(Gap.objects.values_list("backend__name", "triage_id"))
    assert picked == {"tpu": on_two.pk, "gpu": None, "neuron": on_two.pk}


def test_past_its_expiry_day_a_triage_no_longer_applies(project):
    run = run_make(project, "tpu")
    gap_open(project, "tpu", f"{A}t1", "skipped", run=run)
    gap_open(project, "tpu", f"{A}t2", "skipped", run=run)
    today = timezone.now().date()
    t1, t2 = (Gap.objects.get(test__name=n).test for n in ("t1", "t2"))
    lasts = triage(project, test=t1, kind="tracked", issue=issue(project), expires_on=today)
    triage(
        project,
        test=t2,
        kind="tracked",
        issue=issue(project, 2),
        expires_on=today - datetime.timedelta(days=1),
    )

    assert apply(project) == {"t1": (lasts.pk, True, False), "t2": (None, False, False)}
    triages_mark_stale(project_id=project.pk)
    assert dict(Triage.objects.values_list("test__name", "expired")) == {"t1": False, "t2": True}


def test_a_quarantined_gap_is_tracked(project):
    run = run_make(project, "tpu")
    gap = gap_open(project, "tpu", f"{A}t1", "failed", run=run)
    flaky = triage(project, test=gap.test, kind="quarantine", issue=issue(project))

    assert apply(project) == {"t1": (flaky.pk, True, False)}


def closed_flags(project) -> dict[str, tuple[bool, bool]]:
    """Per open gap: (tracked, tracked_closed), after applying triages."""
    triages_apply(project_id=project.pk, backend_ids=[b.pk for b in project.backends.all()])
    gaps = Gap.objects.filter(is_open=True).order_by("test__name")
    return {g.test.name: (g.tracked, g.tracked_closed) for g in gaps}


def issue_in(project, n: int, state: str) -> TrackingIssue:
    return TrackingIssue.objects.create(
        project=project, kind="github", key=f"pytorch/xla#{n}", state=state
    )


def test_a_gap_is_tracked_closed_only_when_every_issue_it_cites_is_closed(project):
    run = run_make(project, "tpu")
    closed, also_closed = issue_in(project, 1, "closed"), issue_in(project, 2, "closed")
    still_open, never_synced = issue_in(project, 3, "open"), issue_in(project, 4, "unknown")
    by_closed = reason_of(project, "see #1 and #2")
    by_closed.issues.add(closed, also_closed)
    by_mixed = reason_of(project, "see #1 and #3")
    by_mixed.issues.add(closed, still_open)
    by_unknown = reason_of(project, "see #4")
    by_unknown.issues.add(never_synced)
    for name, reason in (("t1", by_closed), ("t2", by_mixed), ("t3", by_unknown), ("t4", None)):
        gap_open(project, "tpu", f"{A}{name}", "skipped", run=run, reason=reason)
    t5 = gap_open(project, "tpu", f"{A}t5", "failed", run=run)
    triage(project, test=t5.test, kind="quarantine", issue=closed)
    # The reason's issues are closed, but a triage citing an open issue tracks it now.
    t6 = gap_open(project, "tpu", f"{A}t6", "skipped", run=run, reason=by_closed)
    triage(project, test=t6.test, kind="tracked", issue=still_open)
    # Intended is never tracked, so never tracked_closed either.
    t7 = gap_open(project, "tpu", f"{A}t7", "skipped", run=run, reason=by_closed)
    triage(project, test=t7.test, kind="intended", note="by design")

    assert closed_flags(project) == {
        "t1": (True, True),
        "t2": (True, False),
        "t3": (True, False),  # not known to be closed
        "t4": (False, False),
        "t5": (True, True),
        "t6": (True, False),
        "t7": (False, False),
    }


def test_tracked_closed_follows_the_issue_state_both_ways(project):
    run = run_make(project, "tpu")
    tracked_by = issue_in(project, 1, "open")
    reason = reason_of(project, "see #1")
    reason.issues.add(tracked_by)
    gap_open(project, "tpu", f"{A}t1", "skipped", run=run, reason=reason)
    assert closed_flags(project) == {"t1": (True, False)}

    TrackingIssue.objects.filter(pk=tracked_by.pk).update(state="closed")
    assert closed_flags(project) == {"t1": (True, True)}

    TrackingIssue.objects.filter(pk=tracked_by.pk).update(state="open")  # reopened
    assert closed_flags(project) == {"t1": (True, False)}


def test_the_database_finds_exactly_the_keys_each_pattern_matches(project):
    """Patterns found by equality (one test, one file, one class's test in any file) and globs
    found by their regex name the same gaps as the pattern's regex does in Python."""
    run = run_make(project, "tpu")
    tpu = backend_of(project, "tpu")
    gaps = {}
    for key in [*KEYS, "::TestViewOps::test_view_float32", "TestViewOps::test_view_float32"]:
        test = TestCase.objects.create(project=project, key=key, file=key.split("::")[0], name=key)
        gaps[key] = Gap.objects.create(
            project=project, backend=tpu, test=test, state="skipped", opened_run=run,
            opened_at=run.started_at,
        )  # fmt: skip
    patterns = [*CASES, "test/test_ops.py::TestOps::test_add_float32", "**::TestOps::test_*"]
    triages = {p: pattern(project, p, kind="intended", note="x") for p in patterns}

    with connection.cursor() as cursor:
        cursor.execute(CANDIDATES, {"project": project.pk})
        found = set(cursor.fetchall())

    expected = {
        (gap.pk, triages[p].pk)
        for p in patterns
        for key, gap in gaps.items()
        if key_matches(pattern_regex(p), key)
    }
    assert found == expected
    assert {t.match_shape for t in triages.values()} == {"key", "file", "anyfile", "glob"}


def test_a_pick_has_the_rows_no_triage_applies_to_only_where_asked(project):
    """``untriaged``: a row no triage applies to is picked, with no triage, only where the
    condition holds (the engine leaves out the gaps whose flags no pick would change); a row a
    triage applies to is picked whatever the condition says."""
    run = run_make(project, "tpu")
    for name in ("t1", "t2", "t3"):
        gap_open(project, "tpu", f"{A}{name}", "skipped", run=run)
    named = pattern(project, f"{A}t1", kind="intended", note="x")
    picks = model_sql(
        """
        WITH o AS (
            SELECT g.id, g.backend_id, g.test_id, g.reason_id, tc.key AS test_key,
                   tc.file AS test_file, tc.name <> 't3' AS settled
            FROM {gap} g JOIN {testcase} tc ON tc.id = g.test_id
        )
        SELECT tc.name, p.triage_id
        FROM ({picks}) p JOIN {gap} g ON g.id = p.id JOIN {testcase} tc ON tc.id = g.test_id
        """,
        gap=Gap,
        testcase=TestCase,
        picks=triage_picks("o", "id", untriaged=sql.SQL("NOT r.settled")),
    )

    with connection.cursor() as cursor:
        cursor.execute(picks, {"project": project.pk})
        assert sorted(cursor.fetchall()) == [("t1", named.pk), ("t3", None)]


# Tests as ingest stores them: the key escapes the file (parity.pure.normalize.ids), ``file``
# keeps it as it is. A file pattern and a glob over files with no ":" are matched per file, and
# only where a test's file is its key's file part; these are the tests where it is not, and the
# patterns (a class, a test, a ":") that per-file matching must leave to the key.
STORED = [
    ("test/a.py", "TestA", "test_x"),
    ("test/a.py", "TestB", "test_x"),
    ("test/ab.py", "TestA", "test_y[a::b]"),
    ("a::b.py", "TestA", "test_x"),  # key a:\:b.py::TestA::test_x
    ("a:", "TestA", "test_x"),  # key a:\::TestA::test_x
    ("a:b.py", "TestA", "test_x"),  # a lone ":" is kept
    ("", "TestA", "test_x"),  # no file: the key's first part is the class
    ("", "", "test/a.py"),  # no file, no class: no "::" at all
]
STORED_PATTERNS = [
    "test/a.py",
    "test/a*",
    "test/**",
    "a",
    "a*",
    "*.py",
    "TestA",
    "Test*",
    "a:b.py",
    "a:\\",
    "a:*",
    "test/a*::TestA::*",
    "test/**::*::test_x",
    "**::TestA::test_x",
    "a:\\:b.py::TestA::test_x",
]


def test_patterns_matched_per_file_find_what_the_key_matches(project):
    """A file's tests are matched at once only where the file is the key's file part: not for
    a file the key escapes (a "::" or a trailing ":"), nor a test with no file; a glob naming a
    class or test, or holding a ":", is matched key by key."""
    run = run_make(project, "tpu")
    tpu = backend_of(project, "tpu")
    gaps = {}
    for file, class_name, name in STORED:
        key = make_key(file, class_name, name)
        test = TestCase.objects.create(
            project=project, key=key, file=file, class_name=class_name, name=name
        )
        gaps[key] = Gap.objects.create(
            project=project, backend=tpu, test=test, state="skipped", opened_run=run,
            opened_at=run.started_at,
        )  # fmt: skip
    triages = {p: pattern(project, p, kind="intended", note="x") for p in STORED_PATTERNS}

    with connection.cursor() as cursor:
        cursor.execute(CANDIDATES, {"project": project.pk})
        found = sorted(cursor.fetchall())

    expected = sorted(
        (gap.pk, triages[p].pk)
        for p in STORED_PATTERNS
        for key, gap in gaps.items()
        if key_matches(pattern_regex(p), key)
    )
    assert found == expected  # sorted lists: a pair found twice fails too
    pairs = {(g.pk, t.pk): (key, p) for key, g in gaps.items() for p, t in triages.items()}
    named = {pairs[pair] for pair in found}
    assert ("TestA::test_x", "TestA") in named  # no file: the class is the key's file part
    assert ("TestA::test_x", "Test*") in named
    assert ("a:\\::TestA::test_x", "a:\\") in named
    assert not any(key.startswith("a:\\:b.py") for key, p in named if p in ("a", "a*"))
    assert ("test/a.py::TestB::test_x", "test/a*::TestA::*") not in named
    assert {t.match_shape for t in triages.values()} == {"key", "file", "anyfile", "glob"}


CANDIDATES = model_sql(
    """
    WITH o AS (
        SELECT g.id, g.backend_id, g.test_id, g.reason_id, tc.key AS test_key,
               tc.file AS test_file
        FROM {gap} g JOIN {testcase} tc ON tc.id = g.test_id
    )
    SELECT c.id, c.triage_id FROM ({candidates}) c
    """,
    gap=Gap,
    testcase=TestCase,
    candidates=triage_candidates("o", "id"),
)
