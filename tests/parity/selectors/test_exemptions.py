"""The exemptions page's selector: filters, a fixed number of queries, and which file-level
exemptions left which files out of a backend's run."""

import pytest

from parity import selectors
from parity.models import Project
from parity.services.triage import TriageRequest, triages_create
from tests.parity.dashboard_scenario import A, B, C, tid, upload_history

ISSUE = "https://github.com/pytorch/xla/issues/1"


@pytest.fixture
def xla_runs(upload_run, xla) -> Project:
    upload_history(upload_run)
    return xla


def exempt(project: Project, *requests: TriageRequest) -> list[int]:
    return [t.pk for t in triages_create(project=project, requests=requests)]


def test_files_left_out_each_with_the_exemptions_that_left_it_out(
    xla_runs, django_assert_num_queries
):
    ops, b_file, c_quarantined, _ = exempt(
        xla_runs,
        TriageRequest(kind="intended", match="test/ops/**", backends=["neuron"], note="n"),
        TriageRequest(kind="tracked", match=B, issue_url=ISSUE),  # every backend
        TriageRequest(kind="quarantine", match=C, backends=["neuron"], issue_url=ISSUE),
        TriageRequest(kind="tracked", match=C, backends=["gpu"], issue_url=ISSUE),
    )
    # 4 for the list (count, rows, their backends, their probe outcomes); 9 for the files: the
    # backend, its manifest (7: it names the files it left out, which exemptions pass now and the
    # reason exemptions its version hashes), the files its current run ran.
    with django_assert_num_queries(13):
        page = selectors.exemptions_page(
            project=xla_runs, filters={"backend": "neuron"}, files_backend="neuron"
        )
    assert [t.pk for t in page.triages.object_list] == [c_quarantined, b_file, ops]
    files = page.files
    # Quarantined tests still run: their file stays.
    assert (files.backend, files.reference, files.files) == ("neuron", "cpu", [C])
    assert files.reference_files == 3
    assert [(r.exemption.id, r.files) for r in files.removed] == [(ops, [A, B]), (b_file, [B])]
    assert files.removing == files.removed and files.idle == []
    assert files.rows == [(C, files.durations[C], True)] and files.durations[C] > 0
    assert (files.ran_count, files.not_run) == (1, 0)


def test_files_told_to_run_and_not_run_side_by_side():
    files = selectors.BackendFiles(
        backend="gpu",
        reference="cpu",
        files=[A, B, C],
        durations={A: 2.0},
        reference_files=3,
        removed=[],
        ran=frozenset({A, C, "test/only_on_gpu.py"}),
    )
    assert files.rows == [(A, 2.0, True), (B, None, False), (C, None, True)]
    assert (len(files.files), files.ran_count, files.not_run) == (3, 2, 1)


@pytest.mark.django_db
def test_no_files_without_a_backend_or_a_reference(xla, django_assert_num_queries):
    with django_assert_num_queries(1):  # the count: no row to read
        page = selectors.exemptions_page(project=xla, filters={}, files_backend=None)
    assert page.files is None and page.triages.paginator.count == 0
    assert selectors.exemptions_page(project=xla, filters={}, files_backend="mps").files is None
    Project.objects.filter(pk=xla.pk).update(reference_backend=None)
    xla.refresh_from_db()
    assert selectors.exemptions_page(project=xla, filters={}, files_backend="tpu").files is None


def test_an_exemption_that_names_no_file_of_the_reference_is_idle(xla_runs):
    c_for_gpu, gone = exempt(
        xla_runs,
        TriageRequest(kind="tracked", match=C, backends=["gpu"], issue_url=ISSUE),
        TriageRequest(kind="intended", match="test/renamed.py", backends=["gpu"], note="n"),
    )
    files = selectors.exemptions_page(project=xla_runs, filters={}, files_backend="gpu").files
    assert files.files == [A, B]
    assert [(r.exemption.id, r.files) for r in files.removing] == [(c_for_gpu, [C])]
    assert [r.exemption.id for r in files.idle] == [gone]


@pytest.mark.parametrize(
    "match, backends, expected",
    [
        # Files A and B, 4 tests each; open gaps: gpu's a2, neuron's b1-b4, tpu's a2 (an issue
        # tracks it) and a4.
        ("test/ops/**", [], (8, 2, 7, 6)),
        (B, ["neuron"], (4, 1, 4, 4)),  # one file, by equality
        (B, ["gpu"], (4, 1, 0, 0)),
        ("**::TestA::test_a2", [], (1, 1, 2, 1)),  # one class's test, whatever its file
        (tid(A, 4), ["tpu", "gpu"], (1, 1, 1, 1)),  # one test ID
        ("test/ops/test_[ab].py", [], (0, 0, 0, 0)),  # brackets are literal
    ],
)
def test_a_patterns_preview_counts_its_tests_and_the_open_gaps_it_covers(
    xla_runs, django_assert_num_queries, match, backends, expected
):
    with django_assert_num_queries(2):
        preview = selectors.exemption_preview(project=xla_runs, match=match, backends=backends)
    assert (preview.tests, preview.files, preview.gaps, preview.untracked) == expected
