"""What the end-to-end benches share: the live stack of the e2e tests (gunicorn and prefork Celery
workers over Redis, ``tests/e2e/stack.py``) against the database in ``DATABASE_URL``, a project
and upload token in it, timing an upload from its POST until it is done, and printing targets.

The bench process itself uses Django (local settings) only to migrate, create the project and
read upload states; everything measured happens in the stack's processes.
"""

import contextlib
import os
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
if str(REPO_DIR) not in sys.path:
    sys.path.insert(0, str(REPO_DIR))

REDIS_URL = os.environ.get("PARITY_BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
POLL_SECONDS = 0.01


def django_setup() -> None:
    if not os.environ.get("DATABASE_URL"):
        sys.exit("Set DATABASE_URL to a Postgres database the bench may fill (it is migrated).")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parity.settings.local")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


@contextlib.contextmanager
def live_stack(
    directory: Path,
    *,
    concurrency: int = 2,
    workers: int = 1,
    extra_env: dict[str, str] | None = None,
) -> Iterator["LiveStack"]:  # noqa: F821
    """gunicorn and ``workers`` Celery workers of ``concurrency`` processes each."""
    from tests.e2e.stack import LiveStack

    stack = LiveStack(
        directory=directory,
        database_url=os.environ["DATABASE_URL"].split("?")[0],
        redis_url=REDIS_URL,
        queue=f"parity-bench-{uuid.uuid4().hex[:8]}",
        concurrency=concurrency,
        extra_env=extra_env or {},
    )
    try:
        stack.start()
        for _ in range(workers - 1):
            stack.start_worker()
        yield stack
    finally:
        stack.close()


@dataclass(frozen=True)
class BenchProject:
    slug: str
    token: str


def project_fresh(slug: str, backends: tuple[str, ...] = ("cpu", "tpu")) -> BenchProject:
    """The project ``slug`` recreated empty (its runs, results and tests deleted); the first
    of ``backends`` is the reference."""
    from parity.models import Project
    from parity.services.projects import project_create, upload_token_create

    for old in Project.objects.filter(slug=slug):
        old.delete()
    project = project_create(
        slug=slug, backends=list(backends), reference=backends[0], visibility="public"
    )
    return BenchProject(slug=slug, token=upload_token_create(project=project))


@dataclass(frozen=True)
class Timed:
    seconds: float  # from the POST until the upload was seen done
    answered: float  # the POST's answer (202)
    ingest: float  # the worker's part: taken up until finished
    counts: dict[str, int]


def upload_timed(client, path: Path, *, project: str, run: str, **fields: str) -> Timed:
    """Post ``path`` and wait for its upload to be done, timing it."""

    started = time.perf_counter()
    upload_id = upload_post(client, path, project=project, run=run, **fields)
    answered = time.perf_counter() - started
    upload = upload_wait(upload_id)
    return Timed(
        seconds=time.perf_counter() - started,
        answered=answered,
        ingest=(upload.finished_at - upload.started_at).total_seconds(),
        counts=upload.counts,
    )


def upload_post(client, path: Path, *, project: str, run: str, **fields: str) -> int:
    reply = client.post_upload(path, project=project, run=run, **fields)
    if reply.status != 202:
        raise SystemExit(f"upload refused: {reply}")
    return reply.body["id"]


def upload_wait(upload_id: int):
    """The upload once it is done (polled in the database every few milliseconds)."""
    from parity.models import Upload

    while (status := Upload.objects.values_list("status", flat=True).get(pk=upload_id)) not in (
        "done",
        "failed",
    ):
        time.sleep(POLL_SECONDS)
    upload = Upload.objects.get(pk=upload_id)
    if status != "done":
        raise SystemExit(f"upload {upload_id} failed: {upload.error}")
    return upload


def warm_up(client, directory: Path, *, project: str, uploads: int = 8) -> None:
    """Small uploads first, several at once: each gunicorn worker and worker child imports and
    connects lazily on its first request or task (a quarter of a second), which one that has
    been running does not pay for again. Sent together, they reach every process of the stack."""
    from tests.e2e.generate import junit_write

    path = directory / "warm-up.xml"
    junit_write(path, cases=10, prefix="warm_up_")
    with ThreadPoolExecutor(max_workers=4) as pool:
        ids = list(
            pool.map(
                lambda _: upload_post(client, path, project=project, run=f"warm-up-{uuid.uuid4()}"),
                range(uploads),
            )
        )
    for upload_id in ids:
        upload_wait(upload_id)


def worker_consuming(stack, worker, *, consuming: bool) -> None:
    """Have ``worker`` take tasks from the stack's queue, or stop taking them, warm all the same
    (Celery's remote control, answered before this returns)."""
    control = stack.celery.control
    change = control.add_consumer if consuming else control.cancel_consumer
    replies = change(stack.queue, destination=[worker.nodename], reply=True, timeout=10)
    if not replies:
        raise SystemExit(f"{worker.nodename} did not answer a change of consumer")


def peak_rss_reset(stack) -> None:
    """Start the workers' peak resident sizes (VmHWM) afresh, as a restart would, but keep their
    processes warm (Linux: ``/proc/PID/clear_refs``)."""
    for worker in stack.workers:
        for pid in worker.group_pids():
            with contextlib.suppress(OSError):
                Path(f"/proc/{pid}/clear_refs").write_text("5")


def peak_rss_mib(stack) -> float:
    """The largest peak resident size (VmHWM) among the workers' processes."""
    peak_kib = 0
    for worker in stack.workers:
        for pid in worker.group_pids():
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak_kib = max(peak_kib, int(line.split()[1]))
    return peak_kib / 1024


def target_line(label: str, value: str, target: str, met: bool) -> str:
    return f"  {label:38} {value:>14}   target {target:<24} {'met' if met else 'NOT MET'}"
