"""Deleting a run or a project removes what no FK cascades: results and raw files on disk."""

from pathlib import Path

from django.db import connection

from parity.models import Project, Result, Run, UploadFile
from tests.conftest import FIXTURES_DIR

PYTEST_SMALL = FIXTURES_DIR / "junit" / "pytest_small.xml"


def result_count() -> int:
    # Every row, whatever its run: orphans are what this test looks for.
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM parity_result")
        return cursor.fetchone()[0]


def test_deleting_a_run_deletes_its_results_and_files(ingest, django_capture_on_commit_callbacks):
    kept = ingest(PYTEST_SMALL, backend="cpu").json()["run"]
    gone = ingest(PYTEST_SMALL, backend="tpu").json()["run"]
    raw = Path(UploadFile.objects.get(upload__run_id=gone).raw.path)
    assert raw.exists() and result_count() == 12

    with django_capture_on_commit_callbacks(execute=True):
        Run.objects.get(pk=gone).delete()

    assert result_count() == 6
    assert set(Result.objects.values_list("run_id", flat=True)) == {kept}
    assert not raw.exists()


def test_deleting_a_project_deletes_every_result(
    project, ingest, django_capture_on_commit_callbacks
):
    ingest(PYTEST_SMALL, backend="cpu")
    ingest(PYTEST_SMALL, backend="gpu")

    with django_capture_on_commit_callbacks(execute=True):
        Project.objects.get(pk=project.pk).delete()

    assert result_count() == 0
    assert not UploadFile.objects.exists()
