"""Raw SQL bound to the models: a statement names each table as a ``{placeholder}`` filled from
the model's ``_meta.db_table``, never by hand, so renaming a table or moving a model cannot leave
a statement behind.

    model_sql("DELETE FROM {gap} WHERE is_open", gap=Gap)  ->  DELETE FROM "parity_gap" ...

Values are still bound as ``%(name)s`` parameters at execution; placeholders take only models
(as quoted identifiers) or ``psycopg2.sql`` fragments. A placeholder left without a value raises
``KeyError`` when the module is imported, not when the statement first runs.
"""

from django.db import models
from psycopg2 import sql


def table(model: type[models.Model]) -> sql.Identifier:
    return sql.Identifier(model._meta.db_table)


def model_sql(statement: str, /, **parts: type[models.Model] | sql.Composable) -> sql.Composed:
    """``statement`` with each ``{name}`` replaced: a model by its quoted table name, a
    ``psycopg2.sql`` object as itself."""
    return sql.SQL(statement).format(
        **{
            name: part if isinstance(part, sql.Composable) else table(part)
            for name, part in parts.items()
        }
    )
