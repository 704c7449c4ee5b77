#!/usr/bin/env python
import os
import sys


def main() -> None:
    # Production unless told: a server started bare must not run in DEBUG with a known secret;
    # a laptop sets DJANGO_SETTINGS_MODULE=parity.settings.local (the Makefile does).
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parity.settings.production")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
