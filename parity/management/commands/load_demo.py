"""Load the demo project by uploading generated JUnit files through the upload API, exactly as
CI would (same view, same serializer, same ingest task)."""

import datetime
import json
import logging
import time
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.base import BaseCommand
from django.db import connection
from rest_framework.test import APIClient

from parity.demo.accelerators import SLUGS as ACCELERATOR_SLUGS
from parity.demo.accelerators import accelerator_projects_load, upload_data
from parity.demo.ahead import demo_uploads_ahead
from parity.demo.many_runs import SLUG as MANY_RUNS_SLUG
from parity.demo.many_runs import many_runs_project_load
from parity.demo.scenario import BRANCH, upstream_disabled
from parity.demo.suites import DEMO_SUITES
from parity.demo.targets import demo_targets_set
from parity.models import Project
from parity.pure.list_formats.parity_file import disabled_dict_entries, exemptions_parse
from parity.services.owners import owners_import
from parity.services.projects import project_create, project_rules_update, upload_token_create
from parity.services.suites import suite_map_load
from parity.services.triage import exemptions_import

FIXTURE = Path(__file__).resolve().parents[2] / "demo" / "fixture.json"
OWNERS = FIXTURE.with_name("CODEOWNERS")  # illustrative owners of the demo's test files
DEMO_SLUG = "pytorch-xla"
# The CPU and GPU runners start PyTorch's own test files as `python3 ../../test/test_x.py`
# from pytorch/xla's checkout: name them by the repository they live in.
DEMO_RULES = {"rewrites": [{"pattern": r"^\.\./\.\./test/", "replacement": "pytorch/test/"}]}
# How each backend's runner starts one test (the scripts run files as `python3 test/x.py`, whose
# unittest or absltest main takes Class.test_name), with the device settings it sets.
DEMO_REPRODUCE = {
    "cpu": "PJRT_DEVICE=CPU CPU_NUM_DEVICES=1 python3 {file} {class}.{name}",
    "gpu": "PJRT_DEVICE=CUDA GPU_NUM_DEVICES=1 python3 {file} {class}.{name}",
    "tpu": "PJRT_DEVICE=TPU python3 {file} {class}.{name}",
    "neuron": "PJRT_DEVICE=NEURON NEURON_NUM_DEVICES=1 python3 {file} {class}.{name}",
}


class Command(BaseCommand):
    help = "Create the pytorch-xla demo project and upload several weeks of generated runs."

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=28)
        parser.add_argument(
            "--reset", action="store_true", help="Delete the demo project first and reload it."
        )

    def handle(self, *args, **options):
        # One log line per upload and recompute is noise, not progress: keep warnings only.
        logging.disable(logging.INFO if options["verbosity"] < 2 else logging.NOTSET)
        try:
            self._load(options)
        finally:
            logging.disable(logging.NOTSET)

    def _load(self, options) -> None:
        if options["reset"]:
            slugs = [DEMO_SLUG, *ACCELERATOR_SLUGS, MANY_RUNS_SLUG]
            Project.objects.filter(slug__in=slugs).delete()
        project = Project.objects.filter(slug=DEMO_SLUG).first()
        if project is None:
            project = project_create(
                slug=DEMO_SLUG,
                name="PyTorch/XLA",
                backends=["cpu", "gpu", "tpu", "neuron"],
                reference="cpu",
                issue_url_template="https://github.com/pytorch/xla/issues/{number}",
                default_branch=BRANCH,
                visibility="public",  # `make demo` shows its pages without a login
            )
            project_rules_update(project=project, rules=DEMO_RULES)
            for backend in project.backends.all():
                backend.reproduce_command = DEMO_REPRODUCE[backend.name]
                backend.save(update_fields=["reproduce_command"])
            fixture = json.loads(FIXTURE.read_text())
            self._exempt(project, fixture)
            # Before the uploads: each run's recompute gives the files it brings their owners.
            owners_import(project=project, text=OWNERS.read_text(), name="CODEOWNERS")
            suite_map_load(project=project, suites=DEMO_SUITES)
            self._upload_all(project, fixture, days=options["days"])
            today = datetime.datetime.now(datetime.UTC).date()
            targets = demo_targets_set(project, today=today)
            self.stdout.write(f"Set {targets} targets (the trend page draws them).")
            self._accelerators(days=options["days"])
            self._many_runs(days=options["days"])
        else:
            self.stdout.write(f"Demo project '{DEMO_SLUG}' exists; use --reset to reload it.")
        key = upload_token_create(project=project, label="demo")
        self.stdout.write(self.style.SUCCESS(f"Upload token for {DEMO_SLUG}: {key}"))
        self._where(key)

    def _where(self, key: str) -> None:
        """Where the site is (``SITE_URL``, which ``make demo`` sets from HOST and PORT), and
        the CI client's variables, ready to paste."""
        site = settings.SITE_URL
        self.stdout.write(f"Dashboard: {site}/  Admin: {site}/admin/ (make superuser for a login)")
        self.stdout.write("To upload as CI would (docs/ci.md), paste:")
        self.stdout.write(f"export PARITY_URL={site} PARITY_PROJECT={DEMO_SLUG} PARITY_TOKEN={key}")

    def _exempt(self, project: Project, fixture: dict) -> None:
        """The exemptions the real lists hold: the runner scripts' commented-out lines and
        PyTorch/XLA's DISABLED_TORCH_TESTS, imported as a project would import them."""
        entries = exemptions_parse(fixture["exemptions"])
        entries += disabled_dict_entries(upstream_disabled(fixture), project=project).entries
        imported = exemptions_import(project=project, entries=entries)
        self.stdout.write(f"Imported {len(imported.created)} exemptions.")

    def _upload_all(self, project: Project, fixture: dict, *, days: int) -> None:
        client = APIClient(HTTP_HOST="127.0.0.1")
        client.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")
        # The demo reloads at will: its 800-odd commits need not each wait for the disk (a crash
        # would lose the last few of them, never the tables' consistency). A session setting:
        # behind a transaction pooler it would outlive the demo on a pooled connection.
        if not settings.PARITY_DB_POOLED:
            with connection.cursor() as cursor:
                cursor.execute("SET synchronous_commit = off")
        end = datetime.datetime.now(datetime.UTC).date()
        started, count = time.monotonic(), 0
        for upload in demo_uploads_ahead(fixture, days=days, end=end):
            response = self._post(client, upload)
            if response.status_code not in (200, 202):
                raise RuntimeError(
                    f"demo upload refused: {response.status_code} {response.content!r}"
                )
            count += 1
            if count == FRESH_STATISTICS_AFTER:
                _analyze()
            self._progress(f"Uploading the runs of {upload.day}: {count} files sent")
        self._progress("")
        self.stdout.write(f"Uploaded {count} demo files in {time.monotonic() - started:.1f}s.")

    def _accelerators(self, *, days: int) -> None:
        """The two small projects of ``parity.demo.accelerators``: ROCm's arches against CUDA,
        and an out-of-tree backend, through the upload API too."""
        clients: dict[str, APIClient] = {}

        def post(upload) -> None:
            client = clients.get(upload.project)
            if client is None:
                project = Project.objects.get(slug=upload.project)
                client = clients[upload.project] = APIClient(HTTP_HOST="127.0.0.1")
                client.credentials(
                    HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}"
                )
            data = upload_data(upload, ran_at=_ran_at(upload.day))
            response = client.post("/api/v1/uploads/", data, format="multipart")
            if response.status_code not in (200, 202):
                raise RuntimeError(
                    f"demo upload refused: {response.status_code} {response.content!r}"
                )

        end = datetime.datetime.now(datetime.UTC).date()
        projects = accelerator_projects_load(post, days=days, end=end)
        self.stdout.write(f"Loaded {', '.join(p.slug for p in projects)}.")

    def _many_runs(self, *, days: int) -> None:
        """``rocm-many-runs`` (``parity.demo.many_runs``): two weeks of every commit, eight
        runs a day per variant, through the upload API too."""
        client = APIClient(HTTP_HOST="127.0.0.1")
        started, count = time.monotonic(), 0

        def post(data: dict) -> None:
            nonlocal count
            if not count:
                project = Project.objects.get(slug=MANY_RUNS_SLUG)
                client.credentials(
                    HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}"
                )
            response = client.post("/api/v1/uploads/", data, format="multipart")
            if response.status_code not in (200, 202):
                raise RuntimeError(
                    f"demo upload refused: {response.status_code} {response.content!r}"
                )
            count += 1
            self._progress(f"Uploading the runs of {MANY_RUNS_SLUG}: {count} files sent")

        many_runs_project_load(post, days=days, now=datetime.datetime.now(datetime.UTC))
        self._progress("")
        self.stdout.write(
            f"Loaded {MANY_RUNS_SLUG}: {count} runs in {time.monotonic() - started:.1f}s."
        )

    def _progress(self, line: str) -> None:
        """One line rewritten in place on a terminal; nothing in a log, which keeps the end."""
        if self.stdout.isatty():
            self.stdout.write(f"\r{line:<60}", ending="" if line else "\r")
            self.stdout.flush()

    def _post(self, client: APIClient, upload):
        data = {
            "project": DEMO_SLUG,
            "backend": upload.backend,
            "commit": upload.commit,
            "branch": upload.branch,
            "run": upload.run_key,
            "suite": upload.suite,
            "complete": "true" if upload.complete else "false",
            "timestamp": _ran_at(upload.day).isoformat(),
            "file": [SimpleUploadedFile(upload.filename, upload.content)],
        }
        return client.post("/api/v1/uploads/", data, format="multipart")


# After the first day's uploads, the planner is given the tables' statistics. Autovacuum would,
# a minute later (or never, where it is off); without them it plans the engine's joins for
# tables of one row, which makes the rest of the load several times slower.
FRESH_STATISTICS_AFTER = 12


def _analyze() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def _ran_at(day: datetime.date) -> datetime.datetime:
    """Noon UTC of ``day``, the nightly runs' time; today's, before noon, an hour ago (a run
    stamped in the future would read "0 minutes ago" all morning)."""
    noon = datetime.datetime.combine(day, datetime.time(12), tzinfo=datetime.UTC)
    return min(noon, datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=1))
