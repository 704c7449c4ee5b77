#!/usr/bin/env python
import os
import sys
from pathlib import Path

VENV = Path(__file__).resolve().parent / ".venv"
LOCAL_NOTE = (
    "parity: DJANGO_SETTINGS_MODULE and SECRET_KEY are unset, so this runs with the local "
    "settings (a laptop); a server sets SECRET_KEY and gets the production ones.\n"
)


def with_django() -> None:
    """`python manage.py …` run by a python without Django (the system's) runs again under the
    checkout's .venv, which `make demo` created, so the documented commands work as written."""
    try:
        import django  # noqa: F401
    except ModuleNotFoundError:
        python = VENV / "bin" / "python"
        if not python.exists() or Path(sys.prefix).resolve() == VENV.resolve():
            sys.exit("parity: this python lacks Django; `make install` creates .venv with it")
        os.execv(python, [str(python), __file__, *sys.argv[1:]])


def default_settings() -> str:
    """Production unless told: a server started bare must not run in DEBUG with a known secret.
    Production cannot load without SECRET_KEY, so a command with neither it nor
    DJANGO_SETTINGS_MODULE is run on a laptop: it gets the local settings, except `runserver`,
    which a server could be started with."""
    if os.environ.get("SECRET_KEY") or sys.argv[1:2] == ["runserver"]:
        return "parity.settings.production"
    sys.stderr.write(LOCAL_NOTE)
    return "parity.settings.local"


def main() -> None:
    with_django()
    if "DJANGO_SETTINGS_MODULE" not in os.environ:
        os.environ["DJANGO_SETTINGS_MODULE"] = default_settings()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
