"""Django's PostgreSQL backend, starting the embedded server before its first connection."""

from pathlib import Path

from django.db.backends.postgresql import base

from parity.embedded_db import embedded_database_start


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        embedded_database_start(Path(self.settings_dict["HOST"]))
        return super().get_new_connection(conn_params)
