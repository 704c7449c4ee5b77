"""``python -m parity.embedded_db stop``: stop the embedded Postgres of the settings in force
(``make stop``, and ``make clean`` before it deletes the data). Nothing to do when
DATABASE_URL names a server."""

import sys
from pathlib import Path

import django
from django.conf import settings

from parity.embedded_db import embedded_database_stop


def main(argv: list[str]) -> int:
    if argv != ["stop"]:
        print("usage: python -m parity.embedded_db stop", file=sys.stderr)
        return 2
    django.setup()
    database = settings.DATABASES["default"]
    if database["ENGINE"] != "parity.embedded_db":
        print("DATABASE_URL names a database server: no embedded Postgres to stop.")
        return 0
    data_dir = Path(database["HOST"])
    stopped = embedded_database_stop(data_dir)
    if stopped:
        print(f"Stopped the embedded Postgres in {data_dir}.")
    else:
        print(f"Nothing to stop: the embedded Postgres in {data_dir} is not running.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
