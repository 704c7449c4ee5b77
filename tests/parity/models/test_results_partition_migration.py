"""Migration 0035 turns a database that holds results into day partitions: every row stays
where reads find it, and new runs go to their days (issue 37)."""

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse

from parity.engine import parity_recompute
from parity.models import FileSeconds, Result, Run
from parity.pure.run_days import run_day
from parity.storage.partitions import partitions_list

BEFORE = [("parity", "0034_sign_in_group_roles")]


def _migrate(targets) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor


def _load_runs(apps) -> list[int]:
    """Two complete runs of a reference and a backend, by the models before migration 0035."""
    model = apps.get_model
    project = model("parity", "Project").objects.create(slug="old", name="old")
    tests = [
        model("parity", "TestCase").objects.create(
            project=project,
            key=f"test/a.py::TestA::test_{i}",
            file="test/a.py",
            class_name="TestA",
            name=f"test_{i}",
        )
        for i in range(3)
    ]
    runs = []
    for name in ("cpu", "tpu"):
        backend = model("parity", "Backend").objects.create(project=project, name=name)
        run = model("parity", "Run").objects.create(
            project=project, backend=backend, key=f"{name}-1", commit="c1", complete=True
        )
        upload = model("parity", "Upload").objects.create(run=run, sha256=name, size=1)
        for i, test in enumerate(tests):
            outcome = 3 if (name == "tpu" and i == 0) else 1
            model("parity", "Result").objects.create(
                run=run, upload=upload, test=test, outcome=outcome, message=""
            )
        model("parity", "FileSeconds").objects.create(
            run=run, upload=upload, file="test/a.py", seconds=1.5
        )
        runs.append(run.pk)
    project.reference_backend = model("parity", "Backend").objects.get(name="cpu")
    project.save()
    return runs


@pytest.mark.django_db(transaction=True)
def test_a_database_with_results_migrates_into_partitions_and_stays_readable(admin_client):
    executor = _migrate(BEFORE)
    runs = _load_runs(executor.loader.project_state(BEFORE).apps)
    try:
        _migrate(executor.loader.graph.leaf_nodes())

        assert {run_day(run_id) for run_id in runs} == {0}
        assert 0 in partitions_list() and 0 in partitions_list(model=FileSeconds)
        assert Result.objects.filter(run_id__in=runs).count() == 6
        assert FileSeconds.objects.filter(run_id__in=runs).count() == 2
        for run in Run.objects.filter(pk__in=runs).order_by("pk"):
            parity_recompute(run=run)
        response = admin_client.get(reverse("project-run", args=["old", runs[1]]))
        assert response.status_code == 200 and b"test_0" in response.content

        new = Run.objects.create(
            project_id=Run.objects.get(pk=runs[0]).project_id,
            backend_id=Run.objects.get(pk=runs[0]).backend_id,
            key="cpu-2",
            commit="c2",
        )
        assert run_day(new.pk) in partitions_list() and new.pk > max(runs)
        Result.objects.create(run=new, upload_id=1, test_id=1, outcome=1, message="")
        assert Result.objects.filter(run_id=new.pk).count() == 1
    finally:
        call_command("flush", interactive=False, verbosity=0)
