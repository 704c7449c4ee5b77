"""The COPY-based writer stores text exactly, collapses reruns, splits a key that a document
repeats in another suite, and rolls back on bad input."""

import hashlib
import threading
from collections.abc import Iterator

import pytest
from django.db import connection, transaction

from ingest.writer import ResultRow, known, results_write
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


def _write_at_once(project: Project, rows: list[ResultRow]) -> tuple[Upload, Upload, object]:
    """Two uploads of ``rows``; the second looks its tests up before the first commits, and
    its insert waits for the first's commit. Returns both uploads and the second's summary."""
    first, second = _upload(project, "first"), _upload(project, "second")
    first_written, release = threading.Event(), threading.Event()

    def write_first() -> None:
        try:
            with transaction.atomic():
                results_write(upload=first, rows=rows)
                first_written.set()
                release.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=write_first)
    thread.start()
    assert first_written.wait(30)
    threading.Timer(1.0, release.set).start()  # while the second upload waits on the first
    with transaction.atomic():
        summary = results_write(upload=second, rows=rows)
    thread.join()
    return first, second, summary


@pytest.mark.django_db(transaction=True)
def test_two_uploads_adding_the_same_new_tests_at_once_share_one_row_each(project):
    """The second upload looks its tests up before the first commits, so it reserves rows of its
    own; its insert then waits for the first and finds them taken: its results move to the
    first upload's tests and reason, and no test or reason is stored twice."""
    keys = [f"test/t.py::TestT::test_{n}" for n in range(40)]
    skips = {keys[3]: "needs a GPU", keys[7]: "needs a GPU"}

    first, second, summary = _write_at_once(project, _rows(keys, skips))

    assert TestCase.objects.count() == 40 and Reason.objects.count() == 1
    reason = Reason.objects.get()
    assert _stored(first) == _stored(second)
    assert [key for key, _, text in _stored(second) if text] == [keys[3], keys[7]]
    assert summary.counts == {"total": 40, "passed": 38, "skipped": 2, "failed": 0, "error": 0}
    assert (summary.new_reason_ids, summary.seen_reason_ids) == ([], [reason.pk])


@pytest.mark.django_db(transaction=True)
def test_new_tests_added_per_batch_survive_another_upload_adding_some_of_them(project, monkeypatch):
    """An upload of new tests adds them batch by batch once it holds the tests lock. Another
    upload adds some of them, holding the lock meanwhile (so this one's first new tests wait for
    the end) and committing after this one read their file: taking the lock, this one reads the
    file again, and finds them; every result names one test."""
    monkeypatch.setattr(writer_results, "BATCH_CASES", 4)
    own = [f"test/t.py::TestT::test_own_{n}" for n in range(10)]
    shared = [f"test/t.py::TestT::test_shared_{n}" for n in range(10)]
    first, second = _upload(project, "first"), _upload(project, "second")
    first_written, release, first_committed = (threading.Event() for _ in range(3))

    def write_first() -> None:
        try:
            with transaction.atomic():
                results_write(upload=first, rows=_rows(shared))
                first_written.set()
                release.wait(30)
            first_committed.set()
        finally:
            connection.close()

    def second_rows() -> Iterator[ResultRow]:
        yield from _rows(own)  # their file is looked up while the first upload is uncommitted
        release.set()
        assert first_committed.wait(30)
        yield from _rows(shared)

    thread = threading.Thread(target=write_first)
    thread.start()
    assert first_written.wait(30)
    with transaction.atomic():
        summary = results_write(upload=second, rows=second_rows())
    thread.join()

    assert TestCase.objects.count() == 20
    assert [key for key, _, _ in _stored(second)] == sorted(own + shared)
    assert _stored(first) == [row for row in _stored(second) if row[0] in shared]
    shared_ids = set(Result.objects.filter(upload=first).values_list("test_id", flat=True))
    assert shared_ids == set(
        Result.objects.filter(upload=second, test__key__in=shared).values_list("test_id", flat=True)
    )
    assert summary.counts["total"] == 20


@pytest.mark.django_db
@pytest.mark.parametrize("share", [1, known.WHOLE_FILE_SHARE])
def test_a_few_cases_of_a_large_known_file_find_their_tests(project, monkeypatch, share):
    """A small upload reads its files whole only when they are not many times larger than
    what it holds of them; otherwise it looks its cases up one by one. Either way each result
    names its existing test, and the one new test is added."""
    monkeypatch.setattr(known, "WHOLE_FILE_SHARE", share)
    keys = [f"test/big.py::TestBig::test_{n}" for n in range(30)]
    results_write(upload=_upload(project, "all"), rows=_rows(keys))
    ids = dict(TestCase.objects.values_list("key", "id"))
    few = [keys[4], keys[17], keys[29], "test/big.py::TestBig::test_new"]

    upload = _upload(project, "few")
    results_write(upload=upload, rows=_rows(few))

    stored = dict(Result.objects.filter(upload=upload).values_list("test__key", "test_id"))
    assert {key: stored[key] for key in few[:3]} == {key: ids[key] for key in few[:3]}
    assert few[-1] in stored and stored[few[-1]] not in ids.values()
    assert TestCase.objects.count() == 31


@pytest.mark.django_db
def test_an_upload_of_many_batches_resolves_in_rounds(project, monkeypatch):
    """With tiny batches, new tests take ids reserved batch by batch and a rerun spans batches:
    the stored results are those of one pass."""
    monkeypatch.setattr(writer_results, "BATCH_CASES", 4)
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


def _test_ids_drawn_since(before: int | None = None) -> int:
    """The tests' id sequence's position (with ``before``: how many ids were drawn since)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [TestCase._meta.db_table])
        cursor.execute("SELECT nextval(%s)", [cursor.fetchone()[0]])
        position = cursor.fetchone()[0]
    return position if before is None else position - before - 1


@pytest.mark.django_db
def test_a_first_ingest_of_many_new_files_draws_one_id_per_new_test(project):
    """New files keep appearing through the report, as parallel runners write them: each batch
    draws ids for its own new tests, never ahead. (The writer used to reserve as many again as
    it had so far, each round: 200k cases over 4,000 files drew 21 million ids.)"""
    keys = [f"test/dir{n % 40}/test_m{n // 30}.py::TestM::test_{n}" for n in range(45_000)]
    before = _test_ids_drawn_since()

    summary = results_write(upload=_upload(project, "first"), rows=_rows(keys))

    drawn = _test_ids_drawn_since(before)
    assert TestCase.objects.count() == summary.counts["total"] == 45_000
    assert drawn == summary.test_ids_drawn == 45_000


# --- one key in several suites ----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_new_tests_looked_up_before_the_lock_wait_for_the_end(project, monkeypatch):
    """A batch can take the tests lock half-way: its own cases had few new tests, then the
    suite tests of a split key, looked up next, are all new. The new tests it found before the
    lock may have been added by another upload since; they wait for the insert at the end
    (which meets such a test and uses its row) instead of going in with the batch, where the
    COPY failed on the duplicate and the upload with it."""
    known_keys = [f"test/t.py::TestT::test_known_{n}" for n in range(3)]
    with transaction.atomic():
        results_write(upload=_upload(project, "before"), rows=_rows(known_keys))
    new = "test/t.py::TestT::test_new"
    place_in_suites = writer_results.UploadWriter._place_in_suites

    def another_upload_adds_the_new_test_first(self, *args):
        # Between the batch's look-up of ``new`` (not found) and its suite tests' look-up.
        def add() -> None:
            try:
                file, class_name, name = new.split("::")
                TestCase.objects.create(
                    project=project, key=new, file=file, class_name=class_name, name=name
                )
            finally:
                connection.close()

        other = threading.Thread(target=add)
        other.start()
        other.join(30)
        return place_in_suites(self, *args)

    monkeypatch.setattr(
        writer_results.UploadWriter, "_place_in_suites", another_upload_adds_the_new_test_first
    )
    upload = _upload(project, "split")
    rows = [*_rows(known_keys), _in("suite one", key=new), _in("suite two", key=new)]

    with transaction.atomic():
        summary = results_write(upload=upload, rows=rows)

    assert sorted(TestCase.objects.values_list("key", flat=True)) == sorted(
        [*known_keys, new, f"{new} [suite: suite one]", f"{new} [suite: suite two]"]
    )
    assert [key for key, _, _ in _stored(upload)] == sorted(
        [*known_keys, f"{new} [suite: suite one]", f"{new} [suite: suite two]"]
    )
    assert summary.counts["total"] == 5


X = "test/t.py::TestT::test_x"


def _in(suite: str, key: str = X, outcome: int = Outcome.PASSED, document: int = 1, **more):
    """A row of ``key`` run in the suite labelled ``suite`` of document ``document``."""
    (row,) = _rows([key])
    return row._replace(outcome=outcome, suite=suite, document=document, **more)


def _names(upload: Upload) -> list[tuple[str, int, bool]]:
    rows = Result.objects.filter(upload=upload).values_list("test__name", "outcome", "flaky")
    return sorted(rows)


@pytest.mark.django_db
def test_a_key_in_two_suites_of_one_document_is_a_test_per_suite(project):
    """The first suite's result was written under the plain key before the second suite
    showed up: it moves to its suite's test, and the plain test, new here, is never made."""
    upload = _upload(project, "browsers")
    rows = [
        _in("FiltersTest / chrome"),
        _in("FiltersTest / chrome", key="test/t.py::TestT::test_y"),
        _in("FiltersTest / internet explorer", outcome=Outcome.ERROR),
    ]

    summary = results_write(upload=upload, rows=rows)

    assert _names(upload) == [
        ("test_x [suite: FiltersTest / chrome]", Outcome.PASSED, False),
        ("test_x [suite: FiltersTest / internet explorer]", Outcome.ERROR, False),
        ("test_y", Outcome.PASSED, False),  # in one suite only: its key stays
    ]
    assert sorted(TestCase.objects.values_list("key", flat=True)) == [
        f"{X} [suite: FiltersTest / chrome]",
        f"{X} [suite: FiltersTest / internet explorer]",
        "test/t.py::TestT::test_y",
    ]
    assert summary.counts == {"total": 3, "passed": 2, "skipped": 0, "failed": 0, "error": 1}


@pytest.mark.django_db
def test_a_key_in_three_suites_is_three_tests(project):
    upload = _upload(project, "projects")
    rows = [_in(f"example.spec.ts @ {browser}") for browser in ("chromium", "firefox", "webkit")]

    summary = results_write(upload=upload, rows=rows)

    assert [name for name, _, _ in _names(upload)] == [
        "test_x [suite: example.spec.ts @ chromium]",
        "test_x [suite: example.spec.ts @ firefox]",
        "test_x [suite: example.spec.ts @ webkit]",
    ]
    assert TestCase.objects.count() == 3 and summary.counts["total"] == 3


@pytest.mark.django_db
@pytest.mark.parametrize(
    "order",
    [
        ("a-failed", "b-passed", "a-passed"),  # a's rerun after the split
        ("a-failed", "a-passed", "b-passed"),  # a's rerun before it, under the plain key
    ],
)
def test_a_rerun_inside_a_suite_counts_once_and_is_flagged_flaky(project, order):
    outcomes = {"passed": Outcome.PASSED, "failed": Outcome.FAILED}
    rows = [
        _in(suite, outcome=outcomes[outcome]) for suite, outcome in (o.split("-") for o in order)
    ]
    upload = _upload(project, "reruns")

    summary = results_write(upload=upload, rows=rows)

    assert _names(upload) == [
        ("test_x [suite: a]", Outcome.PASSED, True),
        ("test_x [suite: b]", Outcome.PASSED, False),
    ]
    assert summary.counts == {"total": 2, "passed": 2, "skipped": 0, "failed": 0, "error": 0}


def _browsers_rows() -> list[ResultRow]:
    """Three files' tests, x and y of each in two browsers (y's second browser skips with a
    reason, x reruns in chrome after the split), a third browser for one file, and a rerun
    of z in a later document."""
    rows = []
    for file in ("a", "b", "c"):
        x, y, z = (f"test/{file}.py::T::test_{n}" for n in "xyz")
        rows += [
            _in("chrome", key=x, outcome=Outcome.FAILED),
            _in("chrome", key=y),
            _in("chrome", key=z, outcome=Outcome.FAILED),
            _in("firefox", key=x),
            _in("firefox", key=y, outcome=Outcome.SKIPPED, reason_kind="skip",
                reason_text="no webgl", reason_fp="webgl"),
            _in("chrome", key=x),
        ]  # fmt: skip
        if file == "b":
            rows.append(_in("webkit", key=y))
    rows += [_in("chrome @ rerun", key=f"test/{f}.py::T::test_z", document=2) for f in "abc"]
    return rows


def _stored_by_key(upload: Upload) -> list[tuple[str, int, bool, str | None]]:
    rows = Result.objects.filter(upload=upload).values_list(
        "test__key", "outcome", "flaky", "reason__text"
    )
    return sorted(rows)


@pytest.mark.django_db
@pytest.mark.parametrize("batch", [1, 2, 3, 5, writer_results.BATCH_CASES])
def test_split_keys_store_the_same_whatever_the_batch_size(project, monkeypatch, batch):
    """A split whose cases fall in different batches (new files, a new reason) is the split of
    one batch: a first ingest and a re-ingest store the same, whatever the batch size."""
    monkeypatch.setattr(writer_results, "BATCH_CASES", batch)
    first, again = _upload(project, "first"), _upload(project, "again")

    first_summary = results_write(upload=first, rows=_browsers_rows())
    again_summary = results_write(upload=again, rows=_browsers_rows())

    expected = []
    for file in "abc":
        x, y, z = (f"test/{file}.py::T::test_{n}" for n in "xyz")
        expected += [
            (f"{x} [suite: chrome]", Outcome.PASSED, True, None),
            (f"{x} [suite: firefox]", Outcome.PASSED, False, None),
            (f"{y} [suite: chrome]", Outcome.PASSED, False, None),
            (f"{y} [suite: firefox]", Outcome.SKIPPED, False, "no webgl"),
            (z, Outcome.PASSED, True, None),  # rerun in another document: one test
        ]
        if file == "b":
            expected.append((f"{y} [suite: webkit]", Outcome.PASSED, False, None))
    assert _stored_by_key(first) == _stored_by_key(again) == sorted(expected)
    assert TestCase.objects.count() == 16  # no plain x or y
    assert first_summary.counts == again_summary.counts
    assert first_summary.counts == {
        "total": 16,
        "passed": 13,
        "skipped": 3,
        "failed": 0,
        "error": 0,
    }


@pytest.mark.django_db
def test_a_split_key_already_in_the_database_keeps_its_tests(project):
    """Earlier runs stored the plain test (one suite then) and one suite's test; a run in two
    suites writes to the existing suite's test, adds the other, and leaves the plain test
    without a result from it."""
    results_write(upload=_upload(project, "one suite"), rows=[_in("chrome")])
    results_write(upload=_upload(project, "earlier split"), rows=[_in("chrome"), _in("ie")])
    plain = TestCase.objects.get(key=X)
    chrome = TestCase.objects.get(key=f"{X} [suite: chrome]")

    upload = _upload(project, "now")
    results_write(upload=upload, rows=[_in("chrome"), _in("firefox", outcome=Outcome.FAILED)])

    stored = Result.objects.filter(upload=upload).values_list("test_id", "test__name", "outcome")
    firefox = TestCase.objects.get(key=f"{X} [suite: firefox]")
    assert sorted(stored) == sorted(
        [(chrome.pk, chrome.name, Outcome.PASSED), (firefox.pk, firefox.name, Outcome.FAILED)]
    )
    assert TestCase.objects.filter(pk=plain.pk).exists()
    assert TestCase.objects.count() == 4  # plain, chrome, ie, firefox


@pytest.mark.django_db
def test_a_key_repeated_in_a_later_document_is_a_rerun_whatever_its_suite(project, ingest):
    """unittest-xml-reporting names each suite after its class and a timestamp: a rerun's
    report differs in the suite's name only, and must not split the test."""
    reports = [
        ("TEST-TestNet-20240101120000.xml", "TestNet-20240101120000", "failed"),
        ("TEST-TestNet-20240101120500.xml", "TestNet-20240101120500", "passed"),
    ]
    files = [
        (name, junit_xml(Case("test.test_net.TestNet", "test_get", outcome), suite=suite))
        for name, suite, outcome in reports
    ]

    ingest(*files)

    assert list(Result.objects.values_list("test__key", "outcome", "flaky")) == [
        ("test/test_net.py::TestNet::test_get", Outcome.PASSED, True)
    ]


@pytest.mark.django_db
def test_xmlrunner_suites_of_one_merged_file_differing_in_run_time_are_one_suite(ingest):
    suites = b"".join(
        b'<testsuite name="TestNet-2024010112%s"><testcase classname="test.test_net.TestNet" '
        b'name="test_get"><failure message="%s"/></testcase></testsuite>' % (stamp, message)
        for stamp, message in ((b"0000", b"timeout"), (b"0500", b"timeout"))
    )

    ingest(("merged.xml", b"<testsuites>%s</testsuites>" % suites))

    assert list(Result.objects.values_list("test__key", "outcome", "flaky")) == [
        ("test/test_net.py::TestNet::test_get", Outcome.FAILED, False)
    ]


@pytest.mark.django_db
def test_a_report_of_browser_projects_through_the_api(api, ingest):
    """Playwright writes each browser project as a suite of the same name on its own host."""
    xml = b"".join(
        [
            b"<testsuites>",
            *(
                b'<testsuite name="example.spec.ts" hostname="%s">'
                b'<testcase classname="example.spec.ts" name="has title"/></testsuite>' % host
                for host in (b"chromium", b"firefox")
            ),
            b"</testsuites>",
        ]
    )

    body = ingest(("playwright.xml", xml)).json()

    assert api.get(body["url"]).json()["counts"]["total"] == 2
    assert sorted(TestCase.objects.values_list("key", flat=True)) == [
        "example.spec.ts::has title [suite: example.spec.ts @ chromium]",
        "example.spec.ts::has title [suite: example.spec.ts @ firefox]",
    ]


@pytest.mark.django_db(transaction=True)
def test_two_uploads_splitting_the_same_key_at_once_share_its_tests(project):
    rows = [_in("chrome"), _in("firefox", outcome=Outcome.FAILED), _in("chrome")]

    first, second, summary = _write_at_once(project, rows)

    assert sorted(TestCase.objects.values_list("key", flat=True)) == [
        f"{X} [suite: chrome]",
        f"{X} [suite: firefox]",
    ]
    assert _stored(first) == _stored(second)
    assert summary.counts["total"] == 2
