"""The pytest plugin (``parity/clients/parity_pytest.py``) run by pytest itself (``pytester``,
in a subprocess, as CI runs it) on a small device suite (``fixtures/pytest_suite``): on TPU its
complex64 ops raise, its all-reduce misses a deadline and its sharding tests need a mesh.

The exemptions come from a saved manifest (offline) or from the live stack's resolve API; the
JUnit the plugin's run writes is read by ingest's own parser, and uploaded to the live stack.
"""

import shutil
import time

import parity_pytest
import pytest

from parity.models import BackendState, ProbeOutcome, Run
from parity.pure.globs import key_matches, pattern_regex
from tests.parity.clients.conftest import CLIENTS_DIR, FIXTURES_DIR
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

pytest_plugins = ["pytester"]

OPS = "test/test_ops.py::TestOps::"
ADD_COMPLEX = f"{OPS}test_add_complex64"
MUL_COMPLEX = f"{OPS}test_mul_complex64"
ALL_REDUCE = "test/test_collectives.py::test_all_reduce_deadline"
SHARDING = ("test/test_sharding.py::test_mesh_shape", "test/test_sharding.py::test_shard_rows")
PASSING = (f"{OPS}test_add_float32", "test/test_collectives.py::test_all_gather")


@pytest.fixture
def run_suite(pytester, monkeypatch):
    """Run the suite on a device in a pytest subprocess with the plugin loaded (``-p``)."""
    shutil.copytree(FIXTURES_DIR / "pytest_suite", pytester.path, dirs_exist_ok=True)
    shutil.copy(FIXTURES_DIR / "manifest_tpu.json", pytester.path)  # as saved by parity_ci.py
    monkeypatch.setenv("PYTHONPATH", str(CLIENTS_DIR))
    for name in ("PARITY_URL", "PARITY_TOKEN", "PARITY_PROJECT", "PARITY_BACKEND"):
        monkeypatch.delenv(name, raising=False)

    def run(*args: str, device: str = "tpu", **env: str):
        monkeypatch.setenv("SUITE_DEVICE", device)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        # Not pytest-django: the suite is no Django project.
        return pytester.runpytest_subprocess(
            *("-p", "no:django", "-p", "no:cacheprovider", "-p", "parity_pytest", "-rs"), *args
        )

    return run


def test_without_a_backend_the_plugin_does_nothing(run_suite):
    result = run_suite()

    result.assert_outcomes(passed=2, failed=5)
    assert "parity" not in result.stdout.str()


def test_a_saved_manifest_skips_exempted_tests_and_reports_quarantined_failures_skipped(
    run_suite, pytester
):
    result = run_suite("--parity-manifest=manifest_tpu.json", "--junitxml=tpu.xml")

    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=2, skipped=5)
    result.stdout.fnmatch_lines(
        [
            "parity: exempted tests of tpu: 2 intended, 1 quarantine, 2 tracked",
            f"parity: quarantined test failed, reported as skipped: {ALL_REDUCE} (call)",
            f"SKIPPED [[]1[]] test/test_collectives.py:*: {FLAKY_MESSAGE}",
            f"SKIPPED [[]2[]] test/test_ops.py*: {COMPLEX_MESSAGE}",
            f"SKIPPED [[]2[]] test/test_sharding.py*: {MESH_MESSAGE}",
        ],
        consecutive=False,
    )
    assert junit_outcomes(pytester.path / "tpu.xml") == {
        ADD_COMPLEX: ("skipped", COMPLEX_MESSAGE),
        MUL_COMPLEX: ("skipped", COMPLEX_MESSAGE),
        ALL_REDUCE: ("skipped", FLAKY_MESSAGE),
        **dict.fromkeys(SHARDING, ("skipped", MESH_MESSAGE)),
        **dict.fromkeys(PASSING, ("passed", None)),
    }


SHAPES = """
import pytest


@pytest.mark.parametrize("n", [1, 2, 3])
def test_square(n):
    assert n * n >= n


@pytest.mark.parametrize("a,b", [(1, 2), (1, 2)])  # one ID twice: pytest adds _0, _1
def test_ordered(a, b):
    assert a < b


class TestShapes:
    @pytest.mark.parametrize("dtype", ["float32", "complex64"])
    def test_zeros(self, dtype):
        pass

    class TestNested:
        def test_inner(self):
            pass


class Sized:
    size = 0

    def test_size(self):
        assert self.size >= 0


for _size in (1, 2):
    globals()[f"TestSize{_size}"] = type(f"TestSize{_size}", (Sized,), {"size": _size})


def documented():
    \"\"\"
    >>> 1 + 1
    2
    \"\"\"
"""


def test_parametrized_class_based_and_generated_tests_keep_their_identity(run_suite, pytester):
    pytester.makepyfile(**{"test/test_shapes": SHAPES})
    args = ("test/test_shapes.py", "--doctest-modules", "--parity-manifest=manifest_tpu.json")

    result = run_suite(*args, "--junitxml=shapes.xml")

    result.assert_outcomes(passed=11)  # as many as pytest collects
    shapes = "test/test_shapes.py::"
    outcomes = junit_outcomes(pytester.path / "shapes.xml")
    assert len(outcomes) == 11
    assert set(outcomes) == {
        *(f"{shapes}test_square[{n}]" for n in (1, 2, 3)),
        f"{shapes}test_ordered[1-2_0]",
        f"{shapes}test_ordered[1-2_1]",
        f"{shapes}TestShapes::test_zeros[float32]",
        f"{shapes}TestShapes::test_zeros[complex64]",
        f"{shapes}TestShapes.TestNested::test_inner",
        f"{shapes}TestSize1::test_size",
        f"{shapes}TestSize2::test_size",
        # As the unittest runner names a doctest: its docstring's qualified name.
        f"{shapes}test_shapes.documented",
    }


def test_a_quarantined_test_that_passes_is_reported_passed(run_suite):
    result = run_suite("--parity-manifest=manifest_tpu.json", device="cpu")

    # On CPU nothing fails: the quarantined all-reduce passes; exempted tests are still skipped.
    result.assert_outcomes(passed=3, skipped=4)
    assert "quarantined test failed" not in result.stdout.str()


def test_a_manifest_of_another_backend_is_refused(run_suite):
    result = run_suite("--parity-manifest=manifest_tpu.json", "--parity-backend", "neuron")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*parity: the manifest is of backend 'tpu', not 'neuron' (--parity-backend)*"]
    )


def test_an_unreachable_server_stops_the_session_with_the_reason(run_suite):
    settings = unreachable_settings()
    url = settings["PARITY_URL"]

    result = run_suite("--parity-backend", "tpu", "--parity-retries", "0", **settings)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*parity: cannot reach {url} (*)*Pass --parity-optional to run every test*"]
    )
    result.assert_outcomes()  # no test ran


def test_with_parity_optional_an_unreachable_server_runs_every_test(run_suite):
    settings = unreachable_settings()
    url = settings["PARITY_URL"]

    result = run_suite(
        "--parity-backend", "tpu", "--parity-retries", "0", "--parity-optional", **settings
    )

    result.assert_outcomes(passed=2, failed=5)
    result.stdout.fnmatch_lines([f"parity: WARNING: no exemptions applied: cannot reach {url}*"])


def test_a_setting_missing_is_named(run_suite):
    result = run_suite("--parity-backend", "tpu")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*parity: set PARITY_URL*"])


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_exemptions_from_the_server_make_the_upload_tracked_and_the_verdict_ok(
    run_suite, pytester, live, http_api
):
    tpu_exemptions(
        http_api,
        complex64=f"{OPS}test_*_complex64",
        flaky=ALL_REDUCE,
        mesh="test/test_sharding.py",
    )
    server = {"PARITY_URL": live.base_url, "PARITY_TOKEN": http_api.token}

    reference = run_suite("--junitxml=cpu.xml", device="cpu")
    tpu = run_suite(
        "--parity-backend", "tpu", "--junitxml=tpu.xml", PARITY_PROJECT="pytorch-xla", **server
    )

    reference.assert_outcomes(passed=7)
    assert tpu.ret == 0, tpu.stdout.str()
    tpu.assert_outcomes(passed=2, skipped=5)
    upload_complete_run(http_api, live, pytester.path / "cpu.xml", backend="cpu", day="2026-05-01")
    run = upload_complete_run(
        http_api, live, pytester.path / "tpu.xml", backend="tpu", day="2026-05-01"
    )
    answer = verdict(http_api, run)
    assert (answer["ok"], answer["opened"]) == (
        True,
        {
            "tracked": 3,
            "untracked": 0,
            "intended": 2,
            "tracked_closed": 0,
            "infra": 0,
            "uncovered": 0,
            "flaky": 0,
        },
    )
    gaps = {gap["test"]: gap for gap in answer["gaps"]}
    assert {
        test: (gap["state"], gap["tracked"], gap["intended"], gap["issues"])
        for test, gap in gaps.items()
    } == {
        ADD_COMPLEX: ("skipped", True, False, [ISSUE_COMPLEX]),
        MUL_COMPLEX: ("skipped", True, False, [ISSUE_COMPLEX]),
        ALL_REDUCE: ("skipped", True, False, [ISSUE_FLAKY]),
        **dict.fromkeys(SHARDING, ("skipped", False, True, [])),
    }
    assert gaps[ALL_REDUCE]["reason"] == FLAKY_MESSAGE


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_a_probe_runs_the_exempted_tests_and_its_upload_flags_those_that_pass_now(
    run_suite, pytester, live, http_api, parity_ci_run
):
    tpu_exemptions(
        http_api,
        complex64=f"{OPS}test_*_complex64",
        flaky=ALL_REDUCE,
        mesh="test/test_sharding.py",
    )
    server = {"PARITY_URL": live.base_url, "PARITY_TOKEN": http_api.token}
    run_suite("--junitxml=cpu.xml", device="cpu")
    upload_complete_run(http_api, live, pytester.path / "cpu.xml", backend="cpu", day="2026-05-01")
    nightly = run_suite(
        "--parity-backend", "tpu", "--junitxml=tpu.xml", PARITY_PROJECT="pytorch-xla", **server
    )
    assert nightly.ret == 0, nightly.stdout.str()
    current = upload_complete_run(
        http_api, live, pytester.path / "tpu.xml", backend="tpu", day="2026-05-01"
    )

    # The weekly probe, on a TPU that has complex64 kernels now; the mesh tests left out.
    probe = run_suite(
        *("--parity-backend", "tpu", "--parity-probe", "--junitxml=probe.xml"),
        *("-k", "not sharding"),
        device="tpu-v6",
        PARITY_PROJECT="pytorch-xla",
        **server,
    )
    probe.assert_outcomes(passed=5, deselected=2)  # nothing exempted is skipped
    probe.stdout.fnmatch_lines(["parity: exempted tests of tpu: *2 tracked (probe: they ran)"])
    manifest = http_api.request("GET", "/api/v1/projects/pytorch-xla/manifest/?backend=tpu").body
    properties = (pytester.path / "probe.xml").read_text()
    assert f'<property name="parity_exemptions_version" value="{manifest["version"]}"' in properties
    assert '<property name="parity_probe" value="true"' in properties

    # Uploaded without --probe: the report says it is one.
    done = parity_ci_run(
        *("upload", str(pytester.path / "probe.xml"), "--backend", "tpu", "--complete"),
        *("--commit", "f" * 40, "--wait"),
    )

    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "uploading them as a probe run" in done.stderr
    assert "probe run: exempted tests ran too" in done.stdout
    assert f"exemptions: version {manifest['version']} applied, unchanged since" in done.stdout
    run = Run.objects.get(probe=True)
    assert run.exemptions_version == manifest["version"]
    passing = probe_outcomes_wait(live, run_id=run.pk)
    assert passing == {
        f"{OPS}test_*_complex64": True,
        ALL_REDUCE: True,
        "test/test_sharding.py": False,
    }
    after = http_api.request("GET", "/api/v1/projects/pytorch-xla/manifest/?backend=tpu").body
    assert {e["match"]: e["passes_now"] for e in after["exemptions"]} == passing
    assert after["version"] == manifest["version"]  # what CI applies did not change
    assert BackendState.objects.get(backend__name="tpu").current_run_id == current


def probe_outcomes_wait(live, *, run_id: int) -> dict[str, bool]:
    """Until the worker has recorded the probe run: each exemption's match, passing now."""
    deadline = time.monotonic() + 60
    while not ProbeOutcome.objects.filter(run_id=run_id).exists():
        live.assert_worker_alive()
        assert time.monotonic() < deadline, f"probe run {run_id} not recorded"
        time.sleep(0.2)
    probes = ProbeOutcome.objects.filter(run_id=run_id).select_related("triage")
    return {p.triage.match: p.passes_now for p in probes}


@pytest.mark.parametrize(
    ("pattern", "node_id", "named"),
    [
        ("test/test_ops.py", "test/test_ops.py::TestOps::test_add", True),
        ("test/test_ops.py", "test/test_ops_extra.py::TestOps::test_add", False),
        ("test/*.py", "test/spmd/test_mesh.py::test_shape", False),
        ("test/**", "test/spmd/test_mesh.py::test_shape", True),
        ("test/test_?ps.py", "test/test_ops.py::test_x", True),
        (f"{OPS}test_*_complex64", ADD_COMPLEX, True),
        (f"{OPS}test_*_complex64", f"{ADD_COMPLEX}_strided", False),
        ("test/test_*::test_x", "test/test_ops.py::TestOps::test_x", False),
        ("test/test_o*::*::test_x", "test/test_ops.py::TestOps::test_x", True),
        ("test/test_ops.py::test_x[float32]", "test/test_ops.py::test_x[float32]", True),
        ("test/test_ops.py::test_x[float32]", "test/test_ops.py::test_x[f]", False),
    ],
)
def test_offline_patterns_name_the_node_ids_the_server_s_patterns_name(pattern, node_id, named):
    assert bool(parity_pytest.pattern_regex(pattern).match(node_id)) is named
    assert key_matches(pattern_regex(pattern), node_id) is named


def test_a_bad_parity_attr_is_a_usage_error_naming_it(run_suite):
    result = run_suite("--parity-backend", "tpu", "--parity-attr", "rocm", PARITY_URL="http://x")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*parity: --attr 'rocm': write key=value*"])
