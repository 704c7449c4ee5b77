"""The writer against an oracle: random uploads (files, suites, reruns, suite splits, known and new
tests, reasons, any batch size and lookup mode) written by the real writer store exactly what a
plain writer of per-row INSERTs stores, given the rules as ``ingest.writer.suites`` states them.

Under CI (``CI`` set) the examples are derandomized: the same ones every run. Locally each run
tries new ones; ``PARITY_HYPOTHESIS_EXAMPLES`` sets how many.
"""

import hashlib
import itertools
import os
import threading
from contextlib import ExitStack
from unittest import mock

import pytest
from django.db import connection, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.writer import ResultRow, known, results_write
from ingest.writer import results as writer_results
from parity.models import FileSeconds, Outcome, Project, Reason, Result, Run, TestCase, Upload
from parity.pure.normalize import TestIdentity, suite_qualified
from parity.services.projects import project_create

EXAMPLES = int(os.environ.get("PARITY_HYPOTHESIS_EXAMPLES", "60"))
_projects = itertools.count()

REASONS = ["needs a GPU", "flaky network", "Not supported on NEURON"]

cases = st.builds(
    lambda file, class_name, name, document, suite, outcome, reason, duration, message: _row(
        file, class_name, name, document, suite, outcome, reason, duration, message
    ),
    file=st.sampled_from(["test/a.py", "test/deep/b.py"]),
    class_name=st.sampled_from(["TestX", "TestY"]),
    name=st.sampled_from(["test_0", "test_1", "test_2"]),
    document=st.integers(1, 2),
    suite=st.sampled_from(["", "chrome", "firefox"]),
    outcome=st.sampled_from(list(Outcome)),
    reason=st.one_of(st.none(), st.sampled_from(REASONS)),
    duration=st.sampled_from([None, 0.5, 1.25]),
    message=st.sampled_from(["", "boom\nat line 2", "tab\there \\N"]),
)
uploads = st.lists(st.lists(cases, max_size=30), min_size=1, max_size=3)
# How the writer may go about it: batch size, and whether files are read whole or by digest.
modes = st.fixed_dictionaries(
    {"batch": st.integers(1, 9), "whole_file_share": st.sampled_from([0, 1, 8])}
)


def _row(file, class_name, name, document, suite, outcome, reason, duration, message):
    has_reason = reason is not None and outcome != Outcome.PASSED
    kind = "skip" if outcome == Outcome.SKIPPED else "failure"
    return ResultRow(
        key=f"{file}::{class_name}::{name}",
        file=file,
        class_name=class_name,
        name=name,
        outcome=outcome,
        duration=duration,
        message=message,
        reason_kind=kind if has_reason else None,
        reason_text=reason if has_reason else None,
        reason_fp=hashlib.sha1(reason.encode()).hexdigest() if has_reason else None,
        suite=suite,
        document=document,
    )


# --- the oracle -------------------------------------------------------------------------------


def oracle_identities(rows: list[ResultRow]) -> tuple[list[TestIdentity], int]:
    """Each row's test by the rules, with all the rows in view; and how many keys were split."""
    label_of, first_suite, own_suite = {}, {}, []
    for row in rows:
        label, last = (row.document, row.suite), label_of.get(row.key)
        if last == "split":
            own_suite.append(row.suite)
        elif last is None or last == label or last[0] != row.document:
            label_of[row.key] = label
            own_suite.append(None)
        else:  # another suite of the same document: split from here on
            first_suite[row.key] = last[1]
            label_of[row.key] = "split"
            own_suite.append(row.suite)
    identities = []
    for row, suite in zip(rows, own_suite, strict=True):
        plain = TestIdentity(row.key, row.file, row.class_name, row.name)
        if suite is None and row.key in first_suite:
            suite = first_suite[row.key]  # written before its split: its first suite's test
        identities.append(plain if suite is None else suite_qualified(plain, suite))
    return identities, len(first_suite)


def oracle_write(upload: Upload, rows: list[ResultRow]) -> dict[str, int]:
    """One INSERT per test, reason and result; the last run of a test is its result."""
    project, identities = upload.run.project, oracle_identities(rows)[0]
    runs: dict[TestIdentity, list[ResultRow]] = {}
    for identity, row in zip(identities, rows, strict=True):
        runs.setdefault(identity, []).append(row)
        if row.reason_fp is not None:
            _oracle_reason(project, row, upload)
    counts = dict.fromkeys(["total", *(label for _, label in Outcome.choices)], 0)
    for identity, test_runs in runs.items():
        test, _ = TestCase.objects.get_or_create(
            project=project,
            file=identity.file,
            key=identity.key,
            defaults={"class_name": identity.class_name, "name": identity.name},
        )
        last = test_runs[-1]
        Result.objects.create(
            run=upload.run,
            upload=upload,
            test=test,
            outcome=last.outcome,
            duration=last.duration,
            message=last.message,
            reason=_oracle_reason(project, last, upload) if last.reason_fp else None,
            flaky=len({run.outcome for run in test_runs}) > 1,
        )
        counts["total"] += 1
        counts[Outcome(last.outcome).label] += 1
    seconds: dict[str, float] = {}
    for identity, row in zip(identities, rows, strict=True):  # reruns ran too
        if row.duration is not None:
            seconds[identity.file] = seconds.get(identity.file, 0.0) + row.duration
    for file, total in seconds.items():
        FileSeconds.objects.create(run=upload.run, upload=upload, file=file, seconds=total)
    return counts


def _oracle_reason(project: Project, row: ResultRow, upload: Upload) -> Reason:
    seen = upload.run.started_at
    reason, _ = Reason.objects.get_or_create(
        project=project,
        kind=row.reason_kind,
        fingerprint=row.reason_fp,
        defaults={"text": row.reason_text, "first_seen": seen, "last_seen": seen},
    )
    return reason


# --- what the two stored ----------------------------------------------------------------------


def _project(name: str) -> Project:
    return project_create(slug=f"{name}-{next(_projects)}", backends=["cpu"], reference="cpu")


def _upload(project: Project, number: int) -> Upload:
    run = Run.objects.create(
        project=project, backend=project.reference_backend, key=f"run-{number}", commit="0" * 40
    )
    return Upload.objects.create(run=run, sha256=f"{number}".ljust(64, "0"), size=0)


def _tests(project: Project) -> set[tuple[str, str, str, str]]:
    return set(
        TestCase.objects.filter(project=project).values_list("key", "file", "class_name", "name")
    )


def _reasons(project: Project) -> set[tuple[str, str, str]]:
    return set(Reason.objects.filter(project=project).values_list("kind", "fingerprint", "text"))


def _file_seconds(upload: Upload) -> dict[str, float]:
    return dict(FileSeconds.objects.filter(upload=upload).values_list("file", "seconds"))


def _results(upload: Upload) -> list[tuple]:
    fields = ("test__key", "outcome", "duration", "message", "reason__fingerprint", "flaky")
    return sorted(Result.objects.filter(upload=upload).values_list(*fields), key=repr)


def _writer_modes(mode: dict) -> ExitStack:
    stack = ExitStack()
    stack.enter_context(mock.patch.object(writer_results, "BATCH_CASES", mode["batch"]))
    stack.enter_context(mock.patch.object(known, "WHOLE_FILE_SHARE", mode["whole_file_share"]))
    stack.enter_context(mock.patch.object(known, "WHOLE_FILE_TESTS", 0))
    return stack


@pytest.mark.django_db
@settings(
    max_examples=EXAMPLES,
    derandomize=bool(os.environ.get("CI")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(uploads=uploads, mode=modes)
def test_the_writer_stores_what_per_row_inserts_store(uploads, mode):
    ours, oracle = _project("writer"), _project("oracle")
    for number, rows in enumerate(uploads):
        tests_before = TestCase.objects.filter(project=ours).count()
        upload = _upload(ours, number)
        with _writer_modes(mode):
            summary = results_write(upload=upload, rows=rows)
        expected = _upload(oracle, number)
        counts = oracle_write(expected, rows)

        assert _results(upload) == _results(expected)
        assert _file_seconds(upload) == pytest.approx(_file_seconds(expected))
        assert summary.counts == counts
        assert _tests(ours) == _tests(oracle)
        assert _reasons(ours) == _reasons(oracle)
        seen = set(Reason.objects.filter(pk__in=summary.seen_reason_ids).values_list("fingerprint"))
        assert seen == set(
            Result.objects.filter(upload=upload, reason__isnull=False).values_list(
                "reason__fingerprint"
            )
        )
        created = TestCase.objects.filter(project=ours).count() - tests_before
        splits = oracle_identities(rows)[1]
        assert created <= summary.test_ids_drawn <= created + splits  # a new plain test, split


@pytest.mark.django_db(transaction=True)
@settings(
    max_examples=max(3, EXAMPLES // 10),
    derandomize=bool(os.environ.get("CI")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(first=st.lists(cases, max_size=30), second=st.lists(cases, max_size=30), mode=modes)
def test_two_uploads_racing_store_what_one_after_the_other_store(first, second, mode):
    """Two uploads of one project written at once, each in its own transaction: the tests, the
    reasons and each upload's results are those of the two written one after the other."""
    ours, oracle = _project("racing"), _project("oracle")
    ups = [_upload(ours, 0), _upload(ours, 1)]
    start = threading.Barrier(2)
    errors = []

    def write(upload: Upload, rows: list[ResultRow]) -> None:
        try:
            start.wait(10)
            with transaction.atomic():
                results_write(upload=upload, rows=rows)
        except Exception as exc:  # reported below, in the test's thread
            errors.append(exc)
        finally:
            connection.close()

    with _writer_modes(mode):
        threads = [
            threading.Thread(target=write, args=(u, r))
            for u, r in zip(ups, [first, second], strict=True)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    assert not errors
    expected = [_upload(oracle, 0), _upload(oracle, 1)]
    oracle_write(expected[0], first)
    oracle_write(expected[1], second)

    assert _tests(ours) == _tests(oracle)
    assert _reasons(ours) == _reasons(oracle)
    assert [_results(u) for u in ups] == [_results(u) for u in expected]
    assert [_file_seconds(u) for u in ups] == [_file_seconds(u) for u in expected]
