"""The heatmap cells' flaky count (issue 46): ``FileGapCount.flaky``, the counted open gaps
that read flaky (``parity.definitions.reads_flaky_q``: flaky, neither tracked nor intended),
moved by the triggers of migration 0039, redefined here with the flag among the columns they
compare: an update that flips ``Gap.flaky`` alone (``history.mark``) moves the count in the same
statement, and a project that keeps no history never sets the flag, so its counts stay zero."""

import importlib

from django.db import migrations, models

_DELTAS = """
    WITH moved AS ({moved}), deltas AS (
        SELECT t.project_id, m.backend_id, t.file,
            coalesce(sum(m.n) FILTER (WHERE NOT m.not_applicable AND NOT m.infra), 0) AS gaps,
            coalesce(sum(m.n) FILTER (WHERE NOT m.not_applicable AND NOT m.infra AND m.intended),
                     0) AS intended,
            coalesce(sum(m.n) FILTER (WHERE m.not_applicable), 0) AS not_applicable,
            coalesce(sum(m.n) FILTER (WHERE NOT m.not_applicable AND m.infra), 0) AS rerun,
            coalesce(sum(m.n) FILTER (WHERE m.state = 'missing' AND NOT m.tracked
                                      AND NOT m.intended AND NOT m.not_applicable),
                     0) AS queue_missing,
            coalesce(sum(m.n) FILTER (WHERE NOT m.not_applicable AND NOT m.infra AND m.flaky
                                      AND NOT m.tracked AND NOT m.intended), 0) AS flaky
        FROM (
            SELECT x.backend_id, x.test_id, x.state, x.tracked, x.intended, x.not_applicable,
                   x.flaky, x.n,
                   x.state IN ('crashed', 'timed_out', 'empty', 'not_run', 'truncated') AS infra
            FROM moved x
        ) m
        CROSS JOIN LATERAL (
            SELECT t.project_id, t.file FROM parity_testcase t WHERE t.id = m.test_id OFFSET 0
        ) t
        GROUP BY t.project_id, m.backend_id, t.file
    )
"""
_COUNTED = "{r}.is_open AND {r}.state <> 'reference_missing'"
_COLUMNS = (
    "{r}.backend_id, {r}.test_id, {r}.state, {r}.tracked, {r}.intended, {r}.not_applicable,"
    " {r}.flaky"
)
_ROWS = f"SELECT {_COLUMNS}, {{n}} AS n FROM {{table}} {{r}} WHERE {_COUNTED}"
_CHANGED = (
    f"SELECT {_COLUMNS}, {{n}} AS n"
    " FROM {table} {r} JOIN {other} {o} ON {o}.id = {r}.id"
    f" WHERE {_COUNTED} AND ({{r}}.backend_id, {{r}}.test_id, {{r}}.is_open, {{r}}.state,"
    " {r}.tracked, {r}.intended, {r}.not_applicable, {r}.flaky) IS DISTINCT FROM ({o}.backend_id,"
    " {o}.test_id, {o}.is_open, {o}.state, {o}.tracked, {o}.intended, {o}.not_applicable,"
    " {o}.flaky)"
)
_UPSERT = """
    INSERT INTO parity_filegapcount AS f
        (project_id, backend_id, file, gaps, intended, not_applicable, rerun, queue_missing,
         flaky)
    SELECT project_id, backend_id, file, gaps, intended, not_applicable, rerun, queue_missing,
           flaky
    FROM deltas
    WHERE (gaps, intended, not_applicable, rerun, queue_missing, flaky) <> (0, 0, 0, 0, 0, 0)
    ON CONFLICT (backend_id, file) DO UPDATE SET
        gaps = f.gaps + EXCLUDED.gaps, intended = f.intended + EXCLUDED.intended,
        not_applicable = f.not_applicable + EXCLUDED.not_applicable,
        rerun = f.rerun + EXCLUDED.rerun, queue_missing = f.queue_missing + EXCLUDED.queue_missing,
        flaky = f.flaky + EXCLUDED.flaky;
"""
_LOWER = """
    UPDATE parity_filegapcount f SET
        gaps = f.gaps + d.gaps, intended = f.intended + d.intended,
        not_applicable = f.not_applicable + d.not_applicable, rerun = f.rerun + d.rerun,
        queue_missing = f.queue_missing + d.queue_missing, flaky = f.flaky + d.flaky
    FROM deltas d
    WHERE f.backend_id = d.backend_id AND f.file = d.file
      AND (d.gaps, d.intended, d.not_applicable, d.rerun, d.queue_missing, d.flaky)
          <> (0, 0, 0, 0, 0, 0);
"""


def _function(name: str, moved: str, write: str) -> str:
    return (
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql SET jit = off"
        " AS $$\nBEGIN\n"
        f"{_DELTAS.format(moved=moved)}{write}\n    RETURN NULL;\nEND\n$$;"
    )


_INSERTED = _ROWS.format(n="1", table="new_rows", r="r")
_DELETED = _ROWS.format(n="-1", table="old_rows", r="r")
_UPDATED = " UNION ALL ".join(
    (
        _CHANGED.format(n="1", table="new_rows", r="r", other="old_rows", o="o"),
        _CHANGED.format(n="-1", table="old_rows", r="r", other="new_rows", o="o"),
    )
)
# The functions only: the triggers of 0039 call them by name.
CREATE_SQL = [
    _function(f"parity_file_gap_counts_{op}", moved, write)
    for op, moved, write in (
        ("insert", _INSERTED, _UPSERT),
        ("update", _UPDATED, _UPSERT),
        ("delete", _DELETED, _LOWER),
    )
]
# Back: 0039's functions again (its triggers stay), before the column goes.
_BEFORE = importlib.import_module("parity.migrations.0039_file_gap_counts")
REVERSE_SQL = [s for s in _BEFORE.CREATE_SQL if s.startswith("CREATE OR REPLACE FUNCTION")]
# The flaky counts of the gaps open now; the triggers keep them from here on.
BACKFILL_SQL = """
    UPDATE parity_filegapcount f SET flaky = c.n
    FROM (
        SELECT g.backend_id, t.file, count(*) AS n
        FROM parity_gap g JOIN parity_testcase t ON t.id = g.test_id
        WHERE g.is_open AND g.flaky AND NOT g.tracked AND NOT g.intended AND NOT g.not_applicable
          AND g.state NOT IN ('reference_missing', 'crashed', 'timed_out', 'empty', 'not_run',
                              'truncated')
        GROUP BY g.backend_id, t.file
    ) c
    WHERE f.backend_id = c.backend_id AND f.file = c.file
"""


class Migration(migrations.Migration):
    dependencies = [
        ("parity", "0056_suite_summaries"),
    ]

    operations = [
        migrations.AddField(
            model_name="filegapcount",
            name="flaky",
            field=models.IntegerField(db_default=0, default=0),
        ),
        migrations.RunSQL(CREATE_SQL, REVERSE_SQL),
        migrations.RunSQL(BACKFILL_SQL, migrations.RunSQL.noop),
    ]
