"""Code owners at a big project's size: what the import, a recompute's refresh and the owner
reads cost with 100k tests in 250 files, 3 backends whose open gaps are 40 % of their tests, and
a CODEOWNERS of ~100 rules (PyTorch's has ~150 active rules).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<a scratch database> \\
        .venv/bin/python bench/owners_bench.py [--files 250] [--tests-per-file 400] [--repeat 5]

Rows are written by SQL (``generate_series``), not through ingest: the bench times the owners'
statements, not the ingest. It migrates the database, makes a throwaway project, and deletes it
at the end. Figures: the median of ``--repeat`` runs, in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parity.settings.test")

SLUG = "owners-bench"
BACKENDS = ("cpu", "gpu", "tpu", "neuron")  # cpu: the reference


def codeowners(files: int) -> str:
    """~110 rules over folders of 10 files each, in PyTorch's style: folders, single files,
    a ``**`` rule, an un-owning rule; the last match wins."""
    lines = ["*  @org/infra", "/test/  @org/core"]
    for folder in range(files // 10):
        lines.append(f"/test/dir{folder:03}/  @org/team{folder % 12}")
        for f in range(folder * 10, folder * 10 + 10, 3):
            lines.append(f"/test/dir{folder:03}/test_f{f:04}.py  @alice @bob")
    lines += ["**/test_f00*.py  @org/early", "/test/dir004/"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=250)
    parser.add_argument("--tests-per-file", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    project = _project(args.files, args.tests_per_file)
    try:
        for name, ms in _measure(project, args.files, args.repeat).items():
            print(f"{name:<58} {ms:8.1f} ms")
    finally:
        project.delete()


def _project(files: int, per_file: int):
    from django.db import connection

    from parity.models import Project
    from parity.services.projects import project_create

    Project.objects.filter(slug=SLUG).delete()
    project = project_create(slug=SLUG, backends=list(BACKENDS), reference="cpu")
    backends = dict(project.backends.values_list("name", "pk"))
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO parity_testcase (project_id, key, file, class_name, name, created_at)
            SELECT %s, format('test/dir%%s/test_f%%s.py::T::t%%s', lpad((f / 10)::text, 3, '0'),
                              lpad(f::text, 4, '0'), n),
                   format('test/dir%%s/test_f%%s.py', lpad((f / 10)::text, 3, '0'),
                          lpad(f::text, 4, '0')), 'T', 't' || n, now()
            FROM generate_series(0, %s - 1) f, generate_series(1, %s) n
            """,
            [project.pk, files, per_file],
        )
        for name in BACKENDS[1:]:  # 40 % of each backend's tests are open gaps
            cursor.execute(
                """
                INSERT INTO parity_gap (project_id, backend_id, test_id, state, is_open,
                                        opened_run_id, opened_at, tracked, intended,
                                        tracked_closed)
                SELECT %s, %s, t.id, 'missing', true, 0, now(), t.id %% 7 = 0, false, false
                FROM parity_testcase t WHERE t.project_id = %s AND t.id %% 5 < 2
                """,
                [project.pk, backends[name], project.pk],
            )
            cursor.execute(
                """
                INSERT INTO parity_filecell (project_id, backend_id, file, passed, failed, error,
                                             skipped, missing)
                SELECT %s, %s, file, count(*), 0, 0, 0, 0 FROM parity_testcase
                WHERE project_id = %s GROUP BY file
                """,
                [project.pk, backends[name], project.pk],
            )
        cursor.execute("ANALYZE parity_testcase; ANALYZE parity_gap; ANALYZE parity_filecell")
    return project


def _measure(project, files: int, repeat: int) -> dict[str, float]:
    from django.db import connection

    from parity.engine.owners import owners_add
    from parity.models import FileOwners, Gap, GapState
    from parity.selectors import (
        GapsQuery,
        gaps_list,
        gaps_owners_attach,
        owners_summary,
        triage_queue,
    )
    from parity.selectors.queue import _groups, untracked_gaps
    from parity.services.owners import owners_import

    text = codeowners(files)
    backends = list(project.backends.values_list("pk", flat=True))

    def run(fn) -> float:
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            fn()
            times.append((time.perf_counter() - started) * 1000)
        return statistics.median(times)

    def refresh_new_file() -> None:
        FileOwners.objects.filter(project=project, file="test/dir000/test_f0001.py").delete()
        owners_add(project_id=project.pk, backend_ids=backends)

    def page(**filters) -> None:  # a page of the gaps list as the API reads it
        gaps_owners_attach(
            list(gaps_list(project=project, query=GapsQuery(**filters))[:500]), project=project
        )

    owner = "@org/team3"
    results = {
        f"owners_import ({len(text.splitlines())} rules, {files} files)": run(
            lambda: owners_import(project=project, text=text, name="CODEOWNERS")
        ),
        "owners_add, a recompute with no new file": run(
            lambda: owners_add(project_id=project.pk, backend_ids=backends)
        ),
        "owners_add, a recompute bringing one new file": run(refresh_new_file),
        f"gaps_list(owner={owner}).count()": run(
            lambda: gaps_list(project=project, query=GapsQuery(owner=owner)).count()
        ),
        f"gaps_list(owner={owner})[:500] with their owners": run(lambda: page(owner=owner)),
        "gaps_list()[:500] with their owners (no filter)": run(page),
        "  the same without owners (before this change)": run(
            lambda: list(
                Gap.objects.filter(project=project, is_open=True)
                .exclude(state=GapState.REFERENCE_MISSING)
                .select_related("backend", "test", "reason", "triage__issue")
                .prefetch_related("reason__issues")
                .order_by("backend__name", "test__key", "pk")[:500]
            )
        ),
        "triage_queue() with its groups' owners": run(lambda: triage_queue(project=project)),
        "  its two GROUP BYs alone (before this change)": run(
            lambda: (
                _groups(untracked_gaps(projects=[project]), ("backend__name", "test__file")),
                _groups(
                    untracked_gaps(projects=[project]).filter(reason__isnull=False),
                    ("backend__name", "reason_id", "reason__text"),
                ),
            )
        ),
        f"triage_queue(owner={owner})": run(lambda: triage_queue(project=project, owner=owner)),
        "owners_summary (the owners page)": run(lambda: owners_summary(project=project)),
    }
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM parity_gap WHERE project_id = %s", [project.pk])
        print(
            f"{cursor.fetchone()[0]:,} open gaps; {owner} owns "
            f"{gaps_list(project=project, query=GapsQuery(owner=owner)).count():,}"
        )
    return results


if __name__ == "__main__":
    main()
