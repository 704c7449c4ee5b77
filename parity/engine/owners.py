"""Test files' code owners (``FileOwners``), matched in SQL against the project's imported
rules (``OwnerRule``, whose regexes Postgres and Python read alike: ``parity.pure.codeowners``).

Two writers, one statement each: the import (``owners_rebuild``, every file the project's tests
name) and a recompute (``owners_add``, the files of the backends' current runs the roll-up does
not know yet), so a file a new run brings has its owners by the time a page shows it. For each
file, the rule with the highest position whose regex matches the file's repository path (its
path cleaned as ``path_normalize`` does, under the import's ``root``) decides its owners; no
rule, or a rule without owners, leaves them empty. A project without an import gets no rows."""

from collections.abc import Collection

from django.db import connection
from psycopg2 import sql

from parity.models import FileCell, FileOwners, OwnerRule, OwnersSource, TestCase
from parity.models.sql import model_sql
from parity.plans import FENCE

# ``parity.pure.codeowners.repository_path`` in SQL: forward slashes, no repeated "/", no
# leading "./" or "/", under the import's root. The pure tests hold the two equal.
_REPOSITORY_PATH = sql.SQL(
    """CASE WHEN f.file = '' THEN ''
            ELSE concat_ws('/', nullif(s.root, ''), regexp_replace(
                regexp_replace(replace(f.file, '\\', '/'), '/{2,}', '/', 'g'),
                '^(\\.?/)+', '')) END"""
)

# Rule by rule, every file (a LATERAL join with rules outside, behind a fence that keeps the
# planner from flattening it back): Postgres keeps only a few dozen compiled regexes, and
# matching file by file, every rule, compiled each rule again per file.
_OWNERS_SQL = """
    WITH paths AS MATERIALIZED (
        SELECT f.file, {path} AS path
        FROM {source} s CROSS JOIN ({files}) f
        WHERE s.project_id = %(project)s
    ), decided AS (
        SELECT DISTINCT ON (m.file) m.file, r.owners, r.line
        FROM {rule} r
        CROSS JOIN LATERAL (
            SELECT p.file FROM paths p WHERE p.path <> '' AND p.path ~ r.regex {fence}
        ) m
        WHERE r.project_id = %(project)s
        ORDER BY m.file, r.position DESC
    )
    INSERT INTO {owners} (project_id, file, owners, rule_line)
    SELECT %(project)s, p.file, coalesce(d.owners, '{{}}'), d.line
    FROM paths p LEFT JOIN decided d ON d.file = p.file
    ON CONFLICT (project_id, file) DO NOTHING
"""

# Files the project's tests name (an import).
_TEST_FILES = model_sql(
    "SELECT DISTINCT t.file FROM {test} t WHERE t.project_id = %(project)s", test=TestCase
)
# Files of the backends' current runs the roll-up lacks (a recompute): usually none.
_NEW_FILES = model_sql(
    """
    SELECT DISTINCT c.file COLLATE "C" AS file FROM {cell} c
    WHERE c.backend_id = ANY(%(backends)s)
      AND NOT EXISTS (
          SELECT 1 FROM {owners} o
          WHERE o.project_id = %(project)s AND o.file = c.file COLLATE "C"
      )
    """,
    cell=FileCell,
    owners=FileOwners,
)


def _statement(files: sql.Composable) -> sql.Composed:
    return model_sql(
        _OWNERS_SQL,
        owners=FileOwners,
        source=OwnersSource,
        rule=OwnerRule,
        files=files,
        path=_REPOSITORY_PATH,
        fence=FENCE,
    )


_REBUILD_SQL = _statement(_TEST_FILES)
_ADD_SQL = _statement(_NEW_FILES)
_DELETE_SQL = model_sql("DELETE FROM {owners} WHERE project_id = %(project)s", owners=FileOwners)


def owners_rebuild(*, project_id: int) -> int:
    """Every file's owners again under the project's rules (after an import). Returns how many
    files. The caller holds the project lock."""
    with connection.cursor() as cursor:
        cursor.execute(_DELETE_SQL, {"project": project_id})
        cursor.execute(_REBUILD_SQL, {"project": project_id})
        return cursor.rowcount


def owners_add(*, project_id: int, backend_ids: Collection[int]) -> int:
    """The owners of the files of ``backend_ids``' current runs that have none recorded yet
    (a recompute, after the file cells). Returns how many files were added."""
    with connection.cursor() as cursor:
        cursor.execute(_ADD_SQL, {"project": project_id, "backends": list(backend_ids)})
        return cursor.rowcount
