"""The family roll-ups' reads at a large project's size: the overview's line (one query for
every family), "also failing in" for a page of gaps and for a CSV batch, a family's tests by
how many arches fail them, and the gaps page and overview that call them.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/families_bench \\
        .venv/bin/python bench/families_bench.py [--tests 100000] [--rounds 5]

It migrates ``DATABASE_URL``'s database and builds (or rebuilds) a project ``bench-families``:
cpu the reference, tpu flat, rocm a family of three arches, ``--tests`` tests, and open gaps
written in bulk SQL: gfx942 fails every 10th test, gfx90a every 5th, navi31 3 of every 20, tpu
every 7th. Each read is timed ``--rounds`` times; the best and the median are printed against
the pages' ``TARGET_MS``.
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

SLUG = "bench-families"
TARGET_MS = 300  # as bench/pages_bench.py --big: every page's median
# Variant -> (modulus, residues below which a test fails there).
FAILING = {"rocm-gfx942": (10, 1), "rocm-gfx90a": (5, 1), "rocm-navi31": (20, 3), "tpu": (7, 1)}


def build(tests: int):
    from django.db import connection
    from django.utils import timezone

    from parity.models import Backend, BackendState, Project, Run
    from parity.services.projects import project_create

    Project.objects.filter(slug=SLUG).delete()
    project = project_create(slug=SLUG, backends=["cpu", "tpu"], reference="cpu")
    family = Backend.objects.create(project=project, name="rocm")
    for arch in ("gfx942", "gfx90a", "navi31"):
        Backend.objects.create(
            project=project, name=f"rocm-{arch}", family=family, attributes={"arch": arch}
        )
    now = timezone.now()
    runs = {}
    for backend in Backend.objects.filter(project=project).exclude(pk=family.pk):
        runs[backend.name] = Run.objects.create(
            project=project, backend=backend, key=f"r-{backend.name}", commit="c" * 40,
            complete=True, completed_at=now, started_at=now,
        )  # fmt: skip
        BackendState.objects.create(
            project=project, backend=backend, current_run=runs[backend.name]
        )
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO parity_testcase (project_id, key, file, class_name, name, created_at)
            SELECT %s, 'test/f' || (i / 400) || '.py::T::test_' || i, 'test/f' || (i / 400)
                   || '.py', 'T', 'test_' || i, now()
            FROM generate_series(1, %s) i
            """,
            [project.pk, tests],
        )
        for name, (modulus, below) in FAILING.items():
            run = runs[name]
            cursor.execute(
                """
                INSERT INTO parity_gap (project_id, backend_id, test_id, state, is_open,
                                        opened_run_id, opened_at, tracked, intended,
                                        tracked_closed, not_applicable)
                SELECT %s, %s, t.id, 'failed', true, %s, now(), false, false, false, false
                FROM parity_testcase t
                WHERE t.project_id = %s
                  AND (substring(t.name from 6)::int %% %s) < %s
                """,
                [project.pk, run.backend_id, run.pk, project.pk, modulus, below],
            )
        cursor.execute("ANALYZE parity_gap; ANALYZE parity_testcase")
    return project


def timed(label: str, rounds: int, read) -> None:
    times = []
    for _ in range(rounds + 1):  # the first warms caches and is dropped
        start = time.perf_counter()
        read()
        times.append((time.perf_counter() - start) * 1000)
    times = times[1:]
    best, median = min(times), statistics.median(times)
    verdict = "ok" if median < TARGET_MS else "OVER"
    print(f"{label:<52} best {best:7.1f} ms  median {median:7.1f} ms  {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from parity import selectors
    from parity.models import Gap
    from parity.selectors import families

    started = time.perf_counter()
    project = build(args.tests)
    open_gaps = Gap.objects.filter(project=project, is_open=True).count()
    took = time.perf_counter() - started
    print(f"built {args.tests:,} tests, {open_gaps:,} open gaps in {took:.1f} s")
    family_ids = [project.backends.get(name="rocm").pk]

    def page(backend: str, size: int):
        gaps = list(
            selectors.gaps_list(project=project, query=selectors.GapsQuery(backend=backend))[:size]
        )
        return lambda: families.gaps_also_failing_attach(gaps, project=project)

    timed("families_failing (the overview's line)", args.rounds,
          lambda: families.families_failing(family_ids=family_ids))  # fmt: skip
    timed("also failing: a page of 50 of rocm-gfx942", args.rounds, page("rocm-gfx942", 50))
    timed("also failing: a page of 50 of tpu (no variant)", args.rounds, page("tpu", 50))
    timed("also failing: a CSV batch of 2,000", args.rounds, page("rocm-gfx90a", 2000))
    timed("family_tests(limit=10) (heatmap by family)", args.rounds,
          lambda: families.family_tests(project=project, family="rocm", limit=10))  # fmt: skip
    timed("project_cards (overview, with the line)", args.rounds,
          lambda: selectors.project_cards(projects=[project]))  # fmt: skip
    since = project.created_at
    gfx942 = selectors.GapsQuery(backend="rocm-gfx942")
    timed("gaps_page, every open gap of rocm-gfx942", args.rounds,
          lambda: selectors.gaps_page(project=project, since=since, open_any_age=True,
                                      filters=gfx942))  # fmt: skip


if __name__ == "__main__":
    main()
