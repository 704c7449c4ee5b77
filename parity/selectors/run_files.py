"""The run manifest of backends' current runs: which test files their CI was told to run and
did not run normally (crashed, timed out, ran no test, never started), for pages that say why
a file's tests have no result. Reads ``RunFile`` rows of current runs only: a few per backend."""

from dataclasses import dataclass

from parity.models import BackendState, Project, RunFile, RunFileState


@dataclass(frozen=True)
class UnrunFile:
    backend: str
    file: str
    state: str  # crashed, timed_out, empty, not_run: the state of its tests without a result
    status: str  # how its process ended: SIGSEGV, exit 124, timed out, not started
    ci_url: str  # the CI run's page; may be empty


def unrun_files(
    *, project: Project, files: list[str] | None = None
) -> dict[tuple[str, str], UnrunFile]:
    """Per (backend name, file): the files of current runs that did not run normally, of
    ``files`` only when given. One query."""
    current = BackendState.objects.filter(project=project, current_run__isnull=False)
    rows = RunFile.objects.filter(run_id__in=current.values("current_run_id")).exclude(
        state=RunFileState.RAN
    )
    if files is not None:
        rows = rows.filter(file__in=files)
    return {
        (row.run.backend.name, row.file): UnrunFile(
            backend=row.run.backend.name,
            file=row.file,
            state=row.state,
            status=row.exit_status,
            ci_url=row.run.ci_url,
        )
        for row in rows.select_related("run__backend")
    }
