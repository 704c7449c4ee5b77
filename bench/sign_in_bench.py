"""What allauth's middleware costs the pages that have nothing to do with sign-in: the login page,
the overview (anonymous, and a member's) and a project's API read, through Django's handler
(the test client), with the middleware chain of parity with a sign-in provider configured and
without, in alternating rounds; the best and the median of each.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<scratch> \\
        .venv/bin/python bench/sign_in_bench.py [--requests 300] [--rounds 5]

The database is migrated (the test settings, which install allauth's apps) and given a private
project with a member; nothing else.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parity.settings.test")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client, override_settings  # noqa: E402

from parity.models import Membership, Project, Role  # noqa: E402
from parity.services.projects import project_create  # noqa: E402

PATHS = {
    "login page": ("anonymous", "/accounts/login/"),
    "overview": ("anonymous", "/"),
    "overview, member": ("member", "/"),
    "project API, member": ("member", "/api/v1/projects/bench-private/parity/"),
}


def clients(middleware: list[str]) -> dict[str, Client]:
    """An anonymous and a member's client whose handlers hold ``middleware`` (a client loads
    its chain at its first request)."""
    made = {"anonymous": Client(HTTP_HOST="localhost"), "member": Client(HTTP_HOST="localhost")}
    made["member"].login(username="bench-member", password="a-bench-password-1")
    with override_settings(MIDDLEWARE=middleware):
        for client in made.values():
            client.get("/accounts/login/")
    return made


def timed(client: Client, path: str, count: int) -> float:
    start = time.perf_counter()
    for _ in range(count):
        assert client.get(path).status_code == 200, path
    return (time.perf_counter() - start) / count * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    if not Project.objects.filter(slug="bench-private").exists():
        project = project_create(slug="bench-private", backends=["cpu"], reference="cpu")
        user = get_user_model().objects.create_user("bench-member", password="a-bench-password-1")
        Membership.objects.create(user=user, project=project, role=Role.VIEWER)
    with_allauth = list(settings.MIDDLEWARE)
    without = [m for m in with_allauth if m != settings.SIGN_IN_MIDDLEWARE]
    assert len(without) == len(with_allauth) - 1
    modes = {"without allauth": clients(without), "with allauth": clients(with_allauth)}
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for mode, made in modes.items():
            for name, (who, path) in PATHS.items():
                times.setdefault((name, mode), []).append(timed(made[who], path, args.requests))
    print(f"ms per request, {args.requests} requests a round, {args.rounds} rounds: best / median")
    for name in PATHS:
        cells = []
        for mode in modes:
            series = times[(name, mode)]
            cells.append(f"{mode} {min(series):.2f} / {statistics.median(series):.2f}")
        print(f"{name:22} " + "   ".join(cells))


if __name__ == "__main__":
    main()
