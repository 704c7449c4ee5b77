"""The current-run rule's three spellings in ``parity.definitions`` (a predicate on one run, a
QuerySet, a SQL condition) agree on every kind of run, and the SQL picks of the run current
at a time agree with the QuerySet's pick of the current run now."""

import itertools

import pytest
from django.db import connection
from psycopg2 import sql

from parity.definitions import (
    NO_BRANCH,
    current_run_at,
    default_branch_runs,
    may_be_current,
    may_be_current_sql,
    on_default_branch,
)
from parity.engine.current import current_run_pick
from parity.models import Run
from parity.models.sql import model_sql
from tests.parity.engine.rows import at, backend_of

BRANCHES = ("main", NO_BRANCH, "feature", "main2")


@pytest.mark.django_db
def test_the_predicate_the_queryset_and_the_sql_are_one_rule(project):
    assert project.default_branch == "main"
    tpu = backend_of(project, "tpu")
    runs = {}
    for n, (branch, probe) in enumerate(itertools.product(BRANCHES, (False, True))):
        run = Run.objects.create(
            project=project,
            backend=tpu,
            key=f"r{n}",
            commit=f"c{n}",
            branch=branch,
            probe=probe,
            complete=True,
            started_at=at("2026-04-01", hour=n),
        )
        runs[run.pk] = may_be_current(probe=probe, branch=branch, default_branch="main")
        assert on_default_branch(run, project) == runs[run.pk]
    queryset = set(default_branch_runs(project).values_list("pk", flat=True))
    statement = model_sql(
        "SELECT r.id FROM {run} r JOIN {project} p ON p.id = r.project_id WHERE {rule}",
        run=Run,
        project=type(project),
        rule=may_be_current_sql("r", sql.SQL("p.default_branch")),
    )
    with connection.cursor() as cursor:
        cursor.execute(statement)
        in_sql = {row[0] for row in cursor.fetchall()}
    expected = {pk for pk, current in runs.items() if current}
    assert len(expected) == 2  # main and no branch, not probes
    assert queryset == expected
    assert in_sql == expected


@pytest.mark.django_db
def test_the_run_current_at_a_time_is_the_current_run_then(project):
    tpu = backend_of(project, "tpu")
    for hour, branch, probe, complete in (
        (1, "main", False, True),
        (2, "feature", False, True),
        (3, "main", True, True),
        (4, NO_BRANCH, False, True),
        (5, "main", False, False),
    ):
        Run.objects.create(
            project=project,
            backend=tpu,
            key=f"h{hour}",
            commit=f"c{hour}",
            branch=branch,
            probe=probe,
            complete=complete,
            started_at=at("2026-04-01", hour=hour),
        )
    statement = model_sql(
        "SELECT {then} FROM {project} p WHERE p.id = %(project)s",
        project=type(project),
        then=current_run_at(
            backend=sql.Placeholder("backend"),
            at=sql.Placeholder("at"),
            default_branch=sql.SQL("p.default_branch"),
        ),
    )
    with connection.cursor() as cursor:
        for hour in range(6):
            cursor.execute(
                statement,
                {"project": project.pk, "backend": tpu.pk, "at": at("2026-04-01", hour=hour)},
            )
            then = cursor.fetchone()[0]
            picked = Run.objects.filter(pk=then).first()
            expected = {0: None, 1: "h1", 2: "h1", 3: "h1", 4: "h4", 5: "h4"}[hour]
            assert (picked.key if picked else None) == expected, hour
    assert current_run_pick(project=project, backend=tpu).key == "h4"
