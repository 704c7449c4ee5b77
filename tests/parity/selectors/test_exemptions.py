"""The exemptions page's selector: filters, a fixed number of queries, and which file-level
exemptions left which files out of a backend's run."""

import pytest

from parity import selectors
from parity.models import Project
from parity.services.triage import TriageRequest, triages_create
from tests.parity.dashboard_scenario import A, B, C, upload_history

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
    # 4 for the list (count, rows, their backends, their probe outcomes); 7 for the files: the
    # backend, its manifest (6: it names the files it left out, and which exemptions pass now).
    with django_assert_num_queries(11):
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
    assert files.rows == [(C, files.durations[C])] and files.durations[C] > 0


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
