import django.db.models.deletion
from django.db import migrations, models

# Each statement that writes gaps moves the counts of the (backend, file) pairs it touched: a
# gap counts +1 as it is after the statement and -1 as it was before, and an update that leaves
# a gap's counted columns as they were moves nothing. States as parity.definitions had them
# (INFRA_STATES: lost by infrastructure, to rerun). A deletion only lowers rows that exist: a
# project's deletion may remove its counts before its gaps. Each moved gap's file is probed by
# its test's id behind a fence (parity.plans.FENCE, spelled here as a migration must): the
# engine writes gaps under hash_joins, which would otherwise hash every test case for each
# statement, however few gaps it moved; the loop that costs under those settings must not be
# compiled (JIT off, as plans.hash_joins has it).
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
                     0) AS queue_missing
        FROM (
            SELECT x.backend_id, x.test_id, x.state, x.tracked, x.intended, x.not_applicable,
                   x.n,
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
_COLUMNS = "{r}.backend_id, {r}.test_id, {r}.state, {r}.tracked, {r}.intended, {r}.not_applicable"
_ROWS = f"SELECT {_COLUMNS}, {{n}} AS n FROM {{table}} {{r}} WHERE {_COUNTED}"
_CHANGED = (
    f"SELECT {_COLUMNS}, {{n}} AS n"
    " FROM {table} {r} JOIN {other} {o} ON {o}.id = {r}.id"
    f" WHERE {_COUNTED} AND ({{r}}.backend_id, {{r}}.test_id, {{r}}.is_open, {{r}}.state,"
    " {r}.tracked, {r}.intended, {r}.not_applicable) IS DISTINCT FROM ({o}.backend_id,"
    " {o}.test_id, {o}.is_open, {o}.state, {o}.tracked, {o}.intended, {o}.not_applicable)"
)
_UPSERT = """
    INSERT INTO parity_filegapcount AS f
        (project_id, backend_id, file, gaps, intended, not_applicable, rerun, queue_missing)
    SELECT project_id, backend_id, file, gaps, intended, not_applicable, rerun, queue_missing
    FROM deltas
    WHERE (gaps, intended, not_applicable, rerun, queue_missing) <> (0, 0, 0, 0, 0)
    ON CONFLICT (backend_id, file) DO UPDATE SET
        gaps = f.gaps + EXCLUDED.gaps, intended = f.intended + EXCLUDED.intended,
        not_applicable = f.not_applicable + EXCLUDED.not_applicable,
        rerun = f.rerun + EXCLUDED.rerun, queue_missing = f.queue_missing + EXCLUDED.queue_missing;
"""
_LOWER = """
    UPDATE parity_filegapcount f SET
        gaps = f.gaps + d.gaps, intended = f.intended + d.intended,
        not_applicable = f.not_applicable + d.not_applicable, rerun = f.rerun + d.rerun,
        queue_missing = f.queue_missing + d.queue_missing
    FROM deltas d
    WHERE f.backend_id = d.backend_id AND f.file = d.file
      AND (d.gaps, d.intended, d.not_applicable, d.rerun, d.queue_missing) <> (0, 0, 0, 0, 0);
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
_TRIGGERS = [
    ("insert", "INSERT", "NEW TABLE AS new_rows", _INSERTED, _UPSERT),
    ("update", "UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows", _UPDATED, _UPSERT),
    ("delete", "DELETE", "OLD TABLE AS old_rows", _DELETED, _LOWER),
]
CREATE_SQL = [
    statement
    for op, event, tables, moved, write in _TRIGGERS
    for statement in (
        _function(f"parity_file_gap_counts_{op}", moved, write),
        f"CREATE TRIGGER file_gap_counts_{op} AFTER {event} ON parity_gap"
        f" REFERENCING {tables} FOR EACH STATEMENT"
        f" EXECUTE FUNCTION parity_file_gap_counts_{op}();",
    )
]
DROP_SQL = [
    statement
    for op, *_ in _TRIGGERS
    for statement in (
        f"DROP TRIGGER file_gap_counts_{op} ON parity_gap;",
        f"DROP FUNCTION parity_file_gap_counts_{op}();",
    )
]
# The counts of the gaps open now; the triggers keep them from here on.
BACKFILL_SQL = _DELTAS.format(moved=_INSERTED.replace("new_rows", "parity_gap")) + _UPSERT


class Migration(migrations.Migration):
    dependencies = [
        ("parity", "0038_presence_blocks"),
    ]

    operations = [
        migrations.CreateModel(
            name="FileGapCount",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("file", models.CharField(max_length=500)),
                ("gaps", models.IntegerField(default=0)),
                ("intended", models.IntegerField(default=0)),
                ("not_applicable", models.IntegerField(default=0)),
                ("rerun", models.IntegerField(default=0)),
                ("queue_missing", models.IntegerField(default=0)),
                (
                    "backend",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="parity.backend",
                    ),
                ),
                (
                    "project",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="parity.project",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["project"], name="filegapcount_project")],
                "constraints": [
                    models.UniqueConstraint(fields=("backend", "file"), name="filegapcount_unique")
                ],
            },
        ),
        migrations.RunSQL(CREATE_SQL, DROP_SQL),
        migrations.RunSQL(BACKFILL_SQL, migrations.RunSQL.noop),
    ]
