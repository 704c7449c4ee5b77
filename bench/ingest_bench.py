"""End-to-end ingest of an N-case JUnit file against a bare streaming parse of the same file.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/parity_bench \\
        .venv/bin/python bench/ingest_bench.py --cases 1000000

Targets (issue 2): re-ingesting a known suite end to end within 3x a bare stdlib iterparse
loop over the file, and under 300 MB of worker memory for 1M cases. Each measurement runs in
a fresh subprocess so its peak RSS (ru_maxrss) is its own. The database named in
DATABASE_URL is migrated and a `bench` project is recreated in it.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_DIR))

from bench.parse_bench import run_stdlib_iterparse, write_junit  # noqa: E402


def _django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parity.settings.local")
    import django

    django.setup()


def child_parse(path: Path) -> int:
    return run_stdlib_iterparse(path)


def child_setup(path: Path) -> int:
    """Recreate the bench project and store the file as a queued upload; print its id."""
    from django.core.files import File
    from django.core.management import call_command

    from parity.models import Project, Run, Upload, UploadFile
    from parity.projects import project_create

    call_command("migrate", verbosity=0)
    Project.objects.filter(slug="bench").delete()
    project = project_create(slug="bench", backends=["cpu"], reference="cpu")
    run = Run.objects.create(
        project=project, backend=project.reference_backend, key="bench", commit="0" * 40
    )
    upload = Upload.objects.create(run=run, sha256="0" * 64, size=path.stat().st_size)
    with path.open("rb") as raw:
        stored = UploadFile(upload=upload, name="junit.xml", sha256="0" * 64, size=upload.size)
        stored.raw.save("junit.xml", File(raw), save=True)
    return upload.pk


def child_ingest(upload_id: int) -> int:
    from ingest.pipeline import upload_ingest
    from parity.models import Upload

    upload_ingest(upload_id=upload_id)
    upload = Upload.objects.get(pk=upload_id)
    assert upload.status == "done", upload.error
    return upload.counts["total"]


def child_reingest(upload_id: int) -> int:
    from ingest.reingest import run_reingest
    from parity.models import Upload

    return run_reingest(run=Upload.objects.get(pk=upload_id).run)[1]


STEPS = {
    "parse": child_parse,
    "setup": child_setup,
    "ingest": child_ingest,
    "reingest": child_reingest,
}


def run_child(step: str, arg: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", step, arg],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        step, arg = args.child
        if step != "parse":
            _django()
        started = time.perf_counter()
        value = STEPS[step](Path(arg) if step in ("parse", "setup") else int(arg))
        print(
            json.dumps(
                {
                    "value": value,
                    "seconds": time.perf_counter() - started,
                    "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                }
            )
        )
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "junit.xml"
        write_junit(path, args.cases)
        print(f"{args.cases:,} cases, {path.stat().st_size / 2**20:.0f} MiB of XML")
        parse = run_child("parse", str(path))
        upload_id = run_child("setup", str(path))["value"]
        first = run_child("ingest", str(upload_id))
        again = run_child("reingest", str(upload_id))
    for label, result in (("bare iterparse", parse), ("first ingest", first), ("re-ingest", again)):
        print(f"{label:15} {result['seconds']:7.2f} s  peak RSS {result['peak_rss_mib']:6.1f} MiB")
    print(f"first ingest / bare parse: {first['seconds'] / parse['seconds']:.2f}x")
    print(f"re-ingest / bare parse:    {again['seconds'] / parse['seconds']:.2f}x  (target 3x)")


if __name__ == "__main__":
    main()
