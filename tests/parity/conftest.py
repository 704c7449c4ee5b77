"""Fixtures for engine and API tests: runs uploaded as JUnit XML through the upload API, so
every test exercises the whole path (view → ingest task → run completion → recompute)."""

import datetime
import hashlib

import pytest
from django.db import connection

from parity.models import Project
from parity.storage import partitions
from tests.junit_builder import Case, junit_xml

# A run's results: canonical test ID (``file::Class::name``) -> "passed", or (status, message)
# with status skipped, failed or error.
Outcome = str | tuple[str, str]


def run_xml(results: dict[str, Outcome]) -> bytes:
    cases = []
    for test_id, outcome in results.items():
        file, cls, name = test_id.split("::")
        status, message = ("passed", "") if outcome == "passed" else outcome
        cases.append(Case(cls, name, status, message, file=file))
    return junit_xml(*cases)


@pytest.fixture
def xla(project) -> Project:
    """The test project with pytorch/xla's default branch."""
    Project.objects.filter(pk=project.pk).update(default_branch="master")
    project.refresh_from_db()
    return project


def commit_of(day: str, extra: str = "") -> str:
    return hashlib.sha1(f"{day}{extra}".encode()).hexdigest()


@pytest.fixture
def upload_run(xla, ingest, eager_errors_propagate):
    """Upload one run (or one shard of it); returns the run id."""

    def _upload(
        backend: str,
        cases: dict[str, Outcome],
        *,
        day: str,
        complete: bool = True,
        branch: str = "master",
        run: str | None = None,
        name: str = "results.xml",
        commit: str | None = None,
        time: str = "12:00",
    ) -> int:
        """``commit``: a per-commit run's commit (default: the day's); ``time``: when CI
        started it that day (UTC)."""
        response = ingest(
            (name, run_xml(cases)),
            backend=backend,
            commit=commit or commit_of(day, branch),
            branch=branch,
            run=run or f"{day}-{commit or branch}-{backend}",
            complete="true" if complete else "false",
            timestamp=f"{day}T{time}:00Z",
        )
        assert response.status_code in (200, 202), response.content
        return response.json()["run"]

    return _upload


def utc(day: str, hour: int = 12) -> str:
    """The API's rendering of noon UTC on ``day``."""
    moment = datetime.datetime.fromisoformat(day).replace(hour=hour, tzinfo=datetime.UTC)
    return moment.isoformat().replace("+00:00", "Z")


# Two tests the reference passes; tpu fails one of them.
OFF_BRANCH_RUNS = {
    "cpu": {"test/a.py::TestA::test_1": "passed", "test/a.py::TestA::test_2": "passed"},
    "tpu": {"test/a.py::TestA::test_1": "passed", "test/a.py::TestA::test_2": ("failed", "boom")},
}


@pytest.fixture
def runs_on_master(xla, upload_run) -> Project:
    """A project that compares ``main`` whose CI uploaded complete runs of cpu and tpu from
    ``master`` only (``OFF_BRANCH_RUNS``): none of them counts until the project compares
    master."""
    Project.objects.filter(pk=xla.pk).update(default_branch="main")
    for backend, cases in OFF_BRANCH_RUNS.items():
        upload_run(backend, cases, day="2026-04-01", branch="master")
    xla.refresh_from_db()
    return xla


@pytest.fixture
def run_day_clock(db):
    """Runs created on the day ``set_day(day)`` says: the run id default reads the day from a
    setting for the test's transaction (rolled back with it), not the clock."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            CREATE OR REPLACE FUNCTION parity_run_id_next() RETURNS bigint LANGUAGE sql AS $$
                SELECT (current_setting('parity.test_day')::bigint << 32)
                       + nextval('parity_run_day_seq') % (1::bigint << 32)
            $$
            """
        )

    def set_day(day: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('parity.test_day', %s, false)", [str(day)])

    yield set_day
    partitions._ensured.clear()  # partitions created in the test went with its transaction
