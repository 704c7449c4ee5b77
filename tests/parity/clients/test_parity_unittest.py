"""The unittest runner (``parity/clients/parity_unittest.py``) run as CI runs it, ``python -m
parity_unittest SCRIPTS``, on a script-style suite (``fixtures/unittest_suite``) whose
device-generic classes are instantiated per device (``TestViewOpsXLA.test_view_xla_complex64``),
whose collectives are flaky on XLA and whose mesh class fails in ``setUpClass`` there.

The JUnit it writes is read by ingest's own parser and normalizer; with the live stack, the
exemptions are written for the canonical tests and the server's resolve maps the runner's
names to them.
"""

import io
import shutil
import subprocess
import sys
from pathlib import Path

import parity_unittest
import pytest

from parity.pure.junit import iter_cases
from tests.parity.clients.conftest import CLIENTS_DIR, FIXTURES_DIR, clean_environment, python38
from tests.parity.clients.reports import (
    COMPLEX_MESSAGE,
    FLAKY_MESSAGE,
    ISSUE_COMPLEX,
    ISSUE_FLAKY,
    MESH_MESSAGE,
    junit_outcomes,
    tpu_exemptions,
    unreachable_settings,
    upload_complete_run,
    verdict,
)

SCRIPTS = ("test/test_view_ops.py", "test/test_collectives.py")
VIEW = "test/test_view_ops.py::TestViewOps::"
COLLECTIVES = "test/test_collectives.py::TestCollectives::"
MESH = "test/test_collectives.py::TestMesh::"
VIEW_COMPLEX = f"{VIEW}test_view_complex64"
ALL_REDUCE = f"{COLLECTIVES}test_all_reduce_deadline"
PASSING = (
    f"{VIEW}test_view_float32",
    f"{VIEW}test_reshape_float32",
    f"{COLLECTIVES}test_all_gather",
)
RUN_SECONDS = 120


@pytest.fixture
def suite(tmp_path) -> Path:
    folder = tmp_path / "suite"
    shutil.copytree(FIXTURES_DIR / "unittest_suite", folder)
    return folder


def run_scripts(
    suite: Path, *args: str, device: str = "xla", python: str = sys.executable, **settings: str
) -> subprocess.CompletedProcess:
    env = clean_environment(PYTHONPATH=str(CLIENTS_DIR), SUITE_DEVICE=device, **settings)
    return subprocess.run(
        [python, "-m", "parity_unittest", *args],
        cwd=suite,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
    )


def test_without_a_backend_the_scripts_run_as_they_are(suite):
    done = run_scripts(suite, *SCRIPTS, "--junit-xml", "reports/xla.xml")

    assert done.returncode == 1, done.stderr
    assert "FAILED (failures=2, errors=2)" in done.stderr
    # Canonical IDs: the device suffix of class and name is gone, the file comes from file=.
    assert junit_outcomes(suite / "reports/xla.xml") == {
        VIEW_COMPLEX: (
            "error",
            "NotImplementedError: aten::view_as_real has no XLA lowering for complex64",
        ),
        ALL_REDUCE: ("failed", "AssertionError: 'xla' == 'xla' : rank 0: all_reduce missed 5 s"),
        f"{MESH}setUpClass": ("error", "RuntimeError: a 2x4 mesh needs 8 devices, this host has 4"),
        **dict.fromkeys(PASSING, ("passed", None)),
    }
    with (suite / "reports/xla.xml").open("rb") as report:
        first = next(iter_cases(report))
    assert (first.classname, first.name, first.file) == (
        "test.test_view_ops.TestViewOpsXLA",
        "test_reshape_xla_float32",
        "test/test_view_ops.py",
    )


def test_every_way_a_test_ends_reaches_ingest_as_it_means(suite):
    done = run_scripts(suite, "test/test_outcomes.py", "--junit-xml", "outcomes.xml")

    assert done.returncode == 1
    outcomes = "test/test_outcomes.py::TestOutcomes::"
    assert junit_outcomes(suite / "outcomes.xml") == {
        f"{outcomes}test_passes": ("passed", None),
        f"{outcomes}test_skipped": ("skipped", "needs a GPU"),
        f"{outcomes}test_known_bug": ("skipped", "expected failure: AssertionError: 1 != 2"),
        f"{outcomes}test_fixed_bug": ("failed", "unexpected success"),
        f"{outcomes}test_second_subtest_fails": ("failed", "AssertionError: 2 != 1"),
        "test/test_outcomes.py::TestTearDownError::test_passes_then_teardown_errors": (
            "error",
            "OSError: could not remove the scratch folder",
        ),
    }


def test_python_3_8_runs_it_alike(suite):
    python = python38()
    if python is None:
        pytest.skip("no Python 3.8 here (PARITY_TEST_PYTHON38, python3.8 or pyenv's 3.8)")

    old = run_scripts(suite, *SCRIPTS, "--junit-xml", "py38.xml", python=python)
    new = run_scripts(suite, *SCRIPTS, "--junit-xml", "py311.xml")

    assert old.returncode == new.returncode == 1, old.stderr
    assert junit_outcomes(suite / "py38.xml") == junit_outcomes(suite / "py311.xml")


def test_a_script_that_cannot_be_imported_fails_the_run_and_the_others_run(suite):
    done = run_scripts(
        suite, "test/test_needs_torch_xla.py", *SCRIPTS, "--junit-xml", "x.xml", device="cpu"
    )

    assert done.returncode == 1
    assert "parity: cannot import test/test_needs_torch_xla.py:" in done.stderr
    assert "No module named 'torch_xla_that_is_not_installed'" in done.stderr
    outcomes = junit_outcomes(suite / "x.xml")
    assert len(outcomes) == 6
    assert {outcome for outcome, _ in outcomes.values()} == {"passed"}


def test_an_unreachable_server_stops_the_run_unless_optional(suite):
    settings = unreachable_settings()
    url = settings["PARITY_URL"]
    args = (*SCRIPTS, "--backend", "tpu", "--retries", "0")

    stopped = run_scripts(suite, *args, **settings)
    optional = run_scripts(suite, *args, "--optional", **settings)

    assert stopped.returncode == 5
    assert f"parity: cannot reach {url} (" in stopped.stderr
    assert "Ran " not in stopped.stderr
    assert optional.returncode == 1  # every test ran, the failures count
    assert f"parity: WARNING: no exemptions applied: cannot reach {url}" in optional.stderr
    assert "Ran 5 tests" in optional.stderr


def test_messages_with_control_characters_still_make_xml_ingest_reads():
    name = parity_unittest.CaseName("test/test_x.py", "test.test_x", "TestX", "test_colour")
    case = parity_unittest.CaseResult(
        name, outcome="failure", message="\x1b[31mred\x1b[0m", details="a\x00b", error_type="E"
    )

    report = parity_unittest.junit_xml([case], seconds=1.0)

    cases = list(iter_cases(io.BytesIO(report)))
    assert [(c.outcome, c.message) for c in cases] == [("failed", "\\x1b[31mred\\x1b[0m")]


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_exemptions_of_canonical_tests_reach_device_suffixed_tests(suite, live, http_api):
    tpu_exemptions(http_api, complex64=VIEW_COMPLEX, flaky=ALL_REDUCE, mesh=f"{MESH}*")
    server = {
        "PARITY_URL": live.base_url,
        "PARITY_TOKEN": http_api.token,
        "PARITY_PROJECT": "pytorch-xla",
    }

    reference = run_scripts(suite, *SCRIPTS, "--junit-xml", "cpu.xml", device="cpu")
    before = manifest_version(http_api)
    tpu = run_scripts(suite, *SCRIPTS, "--backend", "tpu", "--junit-xml", "tpu.xml", **server)

    assert reference.returncode == 0, reference.stderr
    assert tpu.returncode == 0, tpu.stderr
    assert "parity: exempted tests of tpu" in tpu.stderr
    assert "1 intended, 1 quarantine, 1 tracked" in tpu.stderr
    # The mesh class is skipped whole: its setUpClass, which fails on this host, never ran.
    assert "setUpClass" not in tpu.stderr
    tpu_outcomes = {
        VIEW_COMPLEX: ("skipped", COMPLEX_MESSAGE),
        ALL_REDUCE: ("skipped", FLAKY_MESSAGE),
        f"{MESH}test_mesh_shape": ("skipped", MESH_MESSAGE),
        **dict.fromkeys(PASSING, ("passed", None)),
    }
    assert junit_outcomes(suite / "tpu.xml") == tpu_outcomes
    upload_complete_run(http_api, live, suite / "cpu.xml", backend="cpu", day="2026-05-01")
    run = upload_complete_run(http_api, live, suite / "tpu.xml", backend="tpu", day="2026-05-01")
    answer = verdict(http_api, run)
    assert (answer["ok"], answer["opened"]) == (
        True,
        {
            "tracked": 2,
            "untracked": 0,
            "intended": 1,
            "tracked_closed": 0,
            "infra": 0,
            "uncovered": 0,
            "flaky": 0,
        },
    )
    assert {gap["test"]: (gap["state"], gap["issues"]) for gap in answer["gaps"]} == {
        VIEW_COMPLEX: ("skipped", [ISSUE_COMPLEX]),
        ALL_REDUCE: ("skipped", [ISSUE_FLAKY]),
        f"{MESH}test_mesh_shape": ("skipped", []),
    }
    assert applied(before) in (suite / "tpu.xml").read_text()  # for parity_ci.py upload to send

    # A probe: the exempted tests run too, and report what they do on this device.
    probe = run_scripts(
        suite, *SCRIPTS, "--backend", "tpu", "--probe", "--junit-xml", "probe.xml", **server
    )
    assert probe.returncode == 1, probe.stderr  # they still fail here
    assert "1 intended, 1 quarantine, 1 tracked (probe: they run)" in probe.stderr
    probed = junit_outcomes(suite / "probe.xml")
    assert {test: outcome for test, (outcome, _) in probed.items()} == {
        VIEW_COMPLEX: "error",
        ALL_REDUCE: "failed",  # not turned into a skip: a probe quarantines nothing
        f"{MESH}setUpClass": "error",  # the class's fixture ran, and failed, as it would
        **dict.fromkeys(PASSING, "passed"),
    }
    report = (suite / "probe.xml").read_text()
    assert '<property name="parity_probe" value="true" />' in report
    assert applied(manifest_version(http_api)) in report  # the reference's files came since


def manifest_version(http_api) -> str:
    reply = http_api.request("GET", "/api/v1/projects/pytorch-xla/manifest/?backend=tpu")
    assert reply.status == 200, str(reply)
    return reply.body["version"]


def applied(version: str) -> str:
    """The JUnit property that says which exemption list a run applied."""
    return f'<property name="parity_exemptions_version" value="{version}" />'


def test_a_bad_attr_is_named_before_any_test_runs(suite):
    done = run_scripts(suite, *SCRIPTS, "--backend", "tpu", "--attr", "Arch=v5e",
                       **unreachable_settings())  # fmt: skip

    assert done.returncode == 2
    assert "parity: --attr 'Arch=v5e': write key=value" in done.stderr
    assert "Ran " not in done.stderr


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_attrs_pick_the_conditioned_exemptions_the_runner_applies(suite, live, project):
    from parity.services.projects import upload_token_create
    from parity.services.triage import TriageRequest, triage_create

    triage_create(
        project=project,
        request=TriageRequest(
            kind="intended",
            backends=["tpu"],
            match=VIEW_COMPLEX,
            note="no complex64 before libtpu 0.1",
            condition="libtpu < 0.1",
        ),
    )
    server = {
        "PARITY_URL": live.base_url,
        "PARITY_TOKEN": upload_token_create(project=project),
        "PARITY_PROJECT": project.slug,
    }
    args = (SCRIPTS[0], "--backend", "tpu")
    old = run_scripts(suite, *args, "--attr", "libtpu=0.0.9", "--junit-xml", "old.xml", **server)
    new = run_scripts(suite, *args, "--junit-xml", "new.xml", PARITY_ATTR_LIBTPU="0.1", **server)

    assert "parity: exempted tests of tpu" in old.stderr and "1 intended" in old.stderr, old.stderr
    assert junit_outcomes(suite / "old.xml")[VIEW_COMPLEX][0] == "skipped"
    assert "exempted tests of tpu (" in new.stderr and ": none" in new.stderr, new.stderr
    assert junit_outcomes(suite / "new.xml")[VIEW_COMPLEX][0] != "skipped"
