"""Backend variants on the live stack: the client parity serves (``/ci/parity_ci.py``) uploads
a rocm run with ``--attr`` to gunicorn, the Celery worker ingests it into the variant the
attributes name, made on that first upload, and the read API shows the variant; its manifest
holds a conditioned exemption to the attributes CI sends."""

import json
import subprocess
import sys
import urllib.request

import pytest

from parity.models import Backend, Run
from parity.services.projects import upload_token_create
from parity.services.triage import TriageRequest, triage_create
from tests.e2e.test_run_exemptions import run as run_in_processes
from tests.e2e.test_run_manifest import current_run_is, manifest_file, suite_written
from tests.junit_builder import Case, junit_xml
from tests.parity.clients.conftest import CLIENT_SECONDS, clean_environment

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

COMMIT = "7" * 40
ISSUE = "https://github.com/pytorch/xla/issues/3456"


@pytest.fixture
def served_client(live, tmp_path):
    """The client as CI fetches it: ``curl -fsSO "$PARITY_URL/ci/parity_ci.py"``."""
    path = tmp_path / "parity_ci.py"
    with urllib.request.urlopen(f"{live.base_url}/ci/parity_ci.py", timeout=30) as answer:
        path.write_bytes(answer.read())
    return path


def ci(live, project, client, *args: str, **variables: str) -> subprocess.CompletedProcess:
    env = clean_environment(
        PARITY_URL=live.base_url,
        PARITY_PROJECT=project.slug,
        PARITY_TOKEN=upload_token_create(project=project),
        **variables,
    )
    return subprocess.run(
        [sys.executable, str(client), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=CLIENT_SECONDS,
        check=False,
    )


def reports(folder, backend: str):
    folder.mkdir()
    cases = [Case("TestA", "test_1", "passed", file="test/a.py")]
    cases.append(Case("TestA", "test_2", "failed" if backend == "rocm" else "passed", "boom",
                      file="test/a.py"))  # fmt: skip
    (folder / "TEST-results.xml").write_bytes(junit_xml(*cases))
    return str(folder)


def test_a_run_uploaded_with_attrs_lands_in_its_variant(live, project, served_client, tmp_path):
    rocm = Backend.objects.create(project=project, name="rocm")
    upload = ["upload", "--commit", COMMIT, "--complete", "--wait"]
    cpu = ci(live, project, served_client, *upload, "--backend", "cpu",
             reports(tmp_path / "cpu", "cpu"))  # fmt: skip
    assert cpu.returncode == 0, cpu.stderr

    # ROCM_VERSION says 7.0 (the image's convention); the flag says what ran.
    done = ci(
        live,
        project,
        served_client,
        *upload,
        "--backend",
        "rocm",
        "--attr",
        "arch=gfx942",
        "--attr",
        "rocm=7.1",
        reports(tmp_path / "rocm", "rocm"),
        ROCM_VERSION="7.0",
        PARITY_ATTR_OS="ubuntu-24.04",
    )

    assert done.returncode == 0, done.stderr
    assert "verdict for rocm-gfx942 run" in done.stderr + done.stdout
    run = Run.objects.select_related("backend").get(project=project, commit=COMMIT,
                                                    backend__family=rocm)  # fmt: skip
    assert run.attributes == {"arch": "gfx942", "rocm": "7.1", "os": "ubuntu-24.04"}
    assert (run.backend.name, run.backend.attributes) == ("rocm-gfx942", {"arch": "gfx942"})
    current_run_is(project, "rocm-gfx942", run.key)

    # The read API compares the variant with the reference like any backend.
    with urllib.request.urlopen(
        f"{live.base_url}/api/v1/projects/{project.slug}/parity/", timeout=30
    ) as answer:
        backends = {b["backend"]: b for b in json.load(answer)["backends"]}
    assert backends["rocm-gfx942"]["untracked"] == 1

    # The variant's manifest, asked for by the family's name and the attributes.
    triage_create(
        project=project,
        request=TriageRequest(
            kind="tracked",
            backends=["rocm"],
            match="test/a.py::TestA::test_2",
            issue_url=ISSUE,
            condition="arch in (gfx942, gfx90a) and rocm < 7.14",
        ),
    )
    lists = {}
    for version in ("7.1", "7.14"):
        asked = ci(live, project, served_client, "manifest", "--backend", "rocm",
                   "--attr", "arch=gfx942", "--attr", f"rocm={version}")  # fmt: skip
        assert asked.returncode == 0, asked.stderr
        lists[version] = json.loads(asked.stdout)
    assert lists["7.1"]["backend"] == "rocm-gfx942"
    assert [e["match"] for e in lists["7.1"]["exemptions"]] == ["test/a.py::TestA::test_2"]
    assert lists["7.14"]["exemptions"] == []


HIP_SUITE = {
    "test/test_hip.py": "def test_ok():\n    pass\n\n\ndef test_svd():\n    assert False\n"
}
HIP_PASSES = "def test_ok():\n    pass\n\n\ndef test_svd():\n    pass\n"


def test_run_hands_its_attrs_to_the_plugin_which_skips_what_holds_for_them(live, project, tmp_path):
    """``run --attr``: each file's process (the pytest plugin) resolves the exemptions with the
    run's attributes, so one for ROCm before 7.14 skips its test at 7.1 and not at 7.14."""
    Backend.objects.create(project=project, name="rocm")
    suite = suite_written(tmp_path, live, project, HIP_SUITE)
    every = manifest_file(suite, HIP_SUITE)
    triage_create(
        project=project,
        request=TriageRequest(
            kind="tracked",
            backends=["rocm"],
            match="test/test_hip.py::test_svd",
            issue_url=ISSUE,
            condition="rocm < 7.14",
        ),
    )
    outputs = {}
    for number, version in enumerate(("7.1", "7.14"), start=1):
        done = run_in_processes(
            live, project, suite, "rocm", "--manifest", every, "--run", f"rocm-{number}",
            "--attr", "arch=gfx942", "--attr", f"rocm={version}",
        )  # fmt: skip
        assert done.returncode == 0, done.stdout
        outputs[version] = done.stdout

    assert "1 passed, 1 skipped" in outputs["7.1"]
    assert "1 failed, 1 passed" in outputs["7.14"]
    runs = Run.objects.filter(project=project, backend__name="rocm-gfx942").order_by("key")
    assert [r.attributes["rocm"] for r in runs] == ["7.1", "7.14"]


def test_a_pull_request_on_an_older_release_is_gated_by_the_exemption_that_holds_there(
    live, project, served_client, tmp_path
):
    """The backend's current run is at ROCm 7.14, where test_2 passes; a pull request's CI on
    a machine still at 7.1 uploads its failure. The exemption for ROCm before 7.14 holds for
    the run's own release, so the gate passes, judging it tracked, though the exemption lapsed
    on the current run."""
    Backend.objects.create(project=project, name="rocm")
    attrs = ("--attr", "arch=gfx942", "--attr")
    upload = ["upload", "--commit", COMMIT, "--complete", "--wait"]
    for backend, more in (("cpu", ()), ("rocm", (*attrs, "rocm=7.14"))):
        done = ci(live, project, served_client, *upload, "--backend", backend, *more,
                  reports(tmp_path / backend, "cpu"))  # fmt: skip
        assert done.returncode == 0, done.stderr
    current_run_is(project, "rocm-gfx942", Run.objects.get(backend__name="rocm-gfx942").key)
    triage_create(
        project=project,
        request=TriageRequest(kind="tracked", backends=["rocm"], match="test/a.py::TestA::test_2",
                              issue_url=ISSUE, condition="rocm < 7.14"),
    )  # fmt: skip

    done = ci(live, project, served_client, "upload", "--commit", "8" * 40, "--branch", "pr-7",
              "--complete", "--wait", "--gate", "--backend", "rocm", *attrs, "rocm=7.1",
              reports(tmp_path / "pull-request", "rocm"))  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok; opened 0 untracked, 1 tracked" in done.stdout + done.stderr
