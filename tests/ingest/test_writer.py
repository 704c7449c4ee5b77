"""The COPY-based writer stores text exactly, collapses reruns and rolls back on bad input."""

import hashlib
import threading

import pytest
from django.db import connection, transaction

from ingest.writer import ResultRow, results_write
from ingest.writer import results as writer_results
from parity.models import Outcome, Project, Reason, Result, Run, TestCase, Upload
from tests.junit_builder import Case, junit_xml


def test_messages_with_copy_special_characters_are_stored_exactly(ingest):
    message = "C:\\temp\\x\tcolumn two\nsecond line \\N not null"
    ingest(("odd.xml", junit_xml(Case("TestOdd", "test_text", "skipped", message, file="t.py"))))

    assert Result.objects.get().message == message


def test_a_rerun_in_one_upload_counts_once_with_its_last_outcome(api, ingest):
    xml = junit_xml(
        Case("TestFlaky", "test_net", "failed", "ConnectionError", file="test/test_net.py"),
        Case("TestFlaky", "test_net", "passed", file="test/test_net.py"),
    )

    body = ingest(("flaky.xml", xml)).json()

    assert api.get(body["url"]).json()["counts"]["total"] == 1
    assert list(Result.objects.values_list("outcome", flat=True)) == [Outcome.PASSED]


def test_a_rerun_whose_outcomes_differ_is_kept_last_and_flagged_flaky(ingest):
    xml = junit_xml(
        Case("TestFlaky", "test_net", "failed", "ConnectionError", file="test/test_net.py"),
        Case("TestSteady", "test_add", file="test/test_net.py"),
        Case("TestSteady", "test_add", file="test/test_net.py"),
        Case("TestFlaky", "test_net", "passed", file="test/test_net.py"),
    )

    ingest(("flaky.xml", xml))

    stored = Result.objects.values_list("test__name", "outcome", "flaky", "reason_id")
    assert sorted(stored) == [
        ("test_add", Outcome.PASSED, False, None),  # the same outcome twice is no flake
        ("test_net", Outcome.PASSED, True, None),
    ]


def _rows(keys: list[str], outcomes: dict[str, str] | None = None) -> list[ResultRow]:
    """Rows as the normalizer makes them; a skip names its message as its reason."""
    rows = []
    for key in keys:
        file, class_name, name = key.split("::")
        message = (outcomes or {}).get(key)
        rows.append(
            ResultRow(
                key=key,
                file=file,
                class_name=class_name,
                name=name,
                outcome=Outcome.SKIPPED if message else Outcome.PASSED,
                duration=0.5,
                message=message or "",
                reason_kind="skip" if message else None,
                reason_text=message,
                reason_fp=hashlib.sha1(message.encode()).hexdigest() if message else None,
            )
        )
    return rows


def _upload(project: Project, run_key: str) -> Upload:
    run = Run.objects.create(
        project=project, backend=project.reference_backend, key=run_key, commit="0" * 40
    )
    return Upload.objects.create(run=run, sha256=run_key.ljust(64, "0"), size=0)


def _stored(upload: Upload) -> list[tuple[str, int, str | None]]:
    rows = Result.objects.filter(upload=upload).values_list("test__key", "outcome", "reason__text")
    return sorted(rows)


@pytest.mark.django_db(transaction=True)
def test_two_uploads_adding_the_same_new_tests_at_once_share_one_row_each(project):
    """The second upload looks its tests up before the first commits, so it reserves rows of its
    own; its insert then waits for the first and finds them taken: its results move to the
    first upload's tests and reason, and no test or reason is stored twice."""
    keys = [f"test/t.py::TestT::test_{n}" for n in range(40)]
    skips = {keys[3]: "needs a GPU", keys[7]: "needs a GPU"}
    first, second = _upload(project, "first"), _upload(project, "second")
    first_written, release = threading.Event(), threading.Event()

    def write_first() -> None:
        try:
            with transaction.atomic():
                results_write(upload=first, rows=_rows(keys, skips))
                first_written.set()
                release.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=write_first)
    thread.start()
    assert first_written.wait(30)
    threading.Timer(1.0, release.set).start()  # while the second upload waits on the first
    with transaction.atomic():
        summary = results_write(upload=second, rows=_rows(keys, skips))
    thread.join()

    assert TestCase.objects.count() == 40 and Reason.objects.count() == 1
    reason = Reason.objects.get()
    assert _stored(first) == _stored(second)
    assert [key for key, _, text in _stored(second) if text] == [keys[3], keys[7]]
    assert summary.counts == {"total": 40, "passed": 38, "skipped": 2, "failed": 0, "error": 0}
    assert (summary.new_reason_ids, summary.seen_reason_ids) == ([], [reason.pk])


@pytest.mark.django_db
def test_an_upload_past_the_hold_limit_resolves_in_rounds(project, monkeypatch):
    """With a tiny hold limit, a large upload's cases wait for their file's tests a few at a
    time, new tests take ids reserved in rounds, and a rerun spans a round: the stored results
    are those of one pass."""
    monkeypatch.setattr(writer_results, "HOLD_LIMIT", 4)
    files = ("test/a.py", "test/b.py", "test/c.py")
    keys = [f"{files[n % 3]}::TestX::test_{n}" for n in range(30)]
    skips = {keys[n]: f"reason {n % 4}" for n in range(0, 30, 5)}
    rerun = _rows([keys[2]])[0]._replace(outcome=Outcome.FAILED)

    first = _upload(project, "first")
    results_write(upload=first, rows=[rerun, *_rows(keys[:20], skips), rerun])
    again = _upload(project, "again")
    summary = results_write(upload=again, rows=[*_rows(keys, skips), rerun])

    assert TestCase.objects.count() == 30
    expected = sorted(
        (key, Outcome.SKIPPED if key in skips else Outcome.PASSED, skips.get(key)) for key in keys
    )
    failed_rerun = (keys[2], Outcome.FAILED, None)
    assert _stored(first) == sorted(
        [failed_rerun, *(e for e in expected if e[0] in keys[:20] and e[0] != keys[2])]
    )
    assert _stored(again) == sorted([failed_rerun, *(e for e in expected if e[0] != keys[2])])
    assert summary.counts["total"] == 30 and summary.counts["failed"] == 1
