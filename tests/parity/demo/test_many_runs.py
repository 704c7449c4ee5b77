"""The demo's project at many runs a day (``parity.demo.many_runs``), loaded through the upload API
as ``load_demo`` loads it, read as a user reads it: the tests flaky at set rates read flaky, the
test broken at the named commit keeps its gap, gfx942's upgrade has its transition report, and
the compare view ``gfx90a-vs-cuda`` lists as regressed the tests Fisher's exact test (scipy's,
here, on counts taken from the generated runs, not from parity) says regressed."""

from __future__ import annotations

import datetime
import io
from collections import Counter
from collections.abc import Iterator

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient
from scipy.stats import fisher_exact

from parity.demo import many_runs
from parity.demo.accelerators import Case
from parity.demo.many_runs import (
    BREAK_COMMIT,
    BROKEN_TEST,
    FLAKY,
    OLD,
    SLUG,
    UPGRADE_BREAKS,
    UPGRADED,
    UPGRADED_ARCH,
    VIEW,
    ManyUpload,
)
from parity.models import Gap, Project, TestHistory, Transition
from parity.services.projects import upload_token_create

pytestmark = pytest.mark.django_db
NOW = datetime.datetime.now(datetime.UTC)
FAILED = ("failed", "error")


def canonical(case: Case) -> str:
    """The test's ID as parity names it on every backend (the device dropped)."""
    return f"{case.file}::{case.cls}::{case.name}"


@pytest.fixture(scope="module")
def sent(django_db_setup, django_db_blocker) -> Iterator[list[ManyUpload]]:
    """The two weeks loaded once for the module, through the upload API, as ``load_demo``
    does (outside the tests' transactions; flushed afterwards)."""
    uploads = list(many_runs.uploads(days=many_runs.MAX_DAYS, now=NOW))
    client = APIClient(HTTP_HOST="127.0.0.1")

    def post(data: dict) -> None:
        if "HTTP_AUTHORIZATION" not in client._credentials:
            key = upload_token_create(project=Project.objects.get(slug=SLUG))
            client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        response = client.post("/api/v1/uploads/", data, format="multipart")
        assert response.status_code in (200, 202), response.content

    with django_db_blocker.unblock():
        try:
            many_runs.many_runs_project_load(post, days=many_runs.MAX_DAYS, now=NOW)
            yield uploads
        finally:
            call_command("flush", interactive=False, verbosity=0, stdout=io.StringIO())


def api(path: str) -> dict:
    response = APIClient(HTTP_HOST="127.0.0.1").get(f"/api/v1/projects/{SLUG}/{path}")
    assert response.status_code == 200, response.content
    return response.json()


def standing(test_id: int, backend: str) -> dict:
    """Where the test stands on ``backend``, as every page shows it (the test API's)."""
    return api(f"tests/{test_id}/")["backends"][backend]["standing"]


def test_the_flaky_tests_read_flaky(sent):
    for flaky in FLAKY:
        for who in flaky.on:
            backend = "cuda" if who == "cuda" else f"rocm-{who}"
            history = TestHistory.objects.get(
                project__slug=SLUG, backend__name=backend, test__name=flaky.name
            )
            assert history.state == "flaky", (flaky.name, backend, history.outcomes)
            if "cuda" not in flaky.on:  # the reference passed: the newest failure is a gap
                assert standing(history.test_id, backend)["triage"] == "flaky", (flaky, backend)


def test_the_broken_test_has_its_gap_from_the_named_commit(sent):
    for arch in many_runs.ARCHES:
        backend = f"rocm-{arch}"
        history = TestHistory.objects.get(
            project__slug=SLUG, backend__name=backend, test__name=BROKEN_TEST
        )
        assert history.state == "broken"
        gap = Gap.objects.get(backend__name=backend, test=history.test, is_open=True)
        assert gap.opened_run.commit == BREAK_COMMIT
        seen = standing(history.test_id, backend)
        assert seen["outcome"] == "error"
        assert seen["triage"] == "untracked"  # a break is a gap to fix, not flakiness


def test_the_upgrade_has_its_transition_report(sent):
    runs = [u for u in sent if u.arch == UPGRADED_ARCH]
    before = [u for u in runs if u.rocm == OLD][-1]
    after = next(u for u in runs if u.rocm == UPGRADED)
    # The four kinds (docs/transitions.md), from the two runs' generated outcomes: the same
    # tests run on both sides, so none is new or gone.
    moved: dict[str, set[str]] = {"fail_to_pass": set(), "pass_to_fail": set()}
    for case, (was, _) in before.outcomes.items():
        became = after.outcomes[case][0]
        if was in FAILED and became == "passed":
            moved["fail_to_pass"].add(case.name)
        elif was == "passed" and became in FAILED:
            moved["pass_to_fail"].add(case.name)

    transition = Transition.objects.get(project__slug=SLUG)
    assert transition.backend.name == f"rocm-{UPGRADED_ARCH}"
    assert transition.changed == {"rocm": [OLD, UPGRADED]}
    assert transition.counts == {
        "fail_to_pass": len(moved["fail_to_pass"]),
        "pass_to_fail": len(moved["pass_to_fail"]),
        "new": 0,
        "gone": 0,
    }
    # What the upgrade did: the SVD tests fixed, layer norm broken.
    assert {"test_svd_float32", "test_svd_float16", "test_svd_bfloat16"} <= moved["fail_to_pass"]
    assert UPGRADE_BREAKS in moved["pass_to_fail"]
    lists = api(f"transitions/{transition.pk}/")["lists"]
    listed = {
        row["kind"]: {test["test"].rsplit("::", 1)[1] for test in row["tests"]}
        for row in lists
        if row["kind"] in moved
    }
    assert listed == moved


def test_the_compare_view_lists_the_regressed_tests(sent):
    counts: dict[tuple[str, str], Counter[str]] = {}
    for upload in sent:
        if upload.variant not in ("rocm-gfx90a", "cuda"):
            continue
        for case, (outcome, _) in upload.outcomes.items():
            seen = counts.setdefault((canonical(case), upload.variant), Counter())
            if outcome == "passed":
                seen["passed"] += 1
            elif outcome in FAILED:
                seen["failed"] += 1
    expected: dict[str, str] = {}
    for (test, variant), sample in counts.items():
        if variant != "rocm-gfx90a" or not sample:
            continue
        basis = counts[(test, "cuda")]
        if not basis:
            continue
        rate = {
            k: c["passed"] / (c["passed"] + c["failed"]) for k, c in (("s", sample), ("b", basis))
        }
        drop = 100 * (rate["b"] - rate["s"])
        if drop <= 5 or sample["failed"] < 3:
            continue
        table = [[sample["failed"], sample["passed"]], [basis["failed"], basis["passed"]]]
        if fisher_exact(table, alternative="greater").pvalue < 0.05:
            expected[test] = "extreme" if drop > 15 else "regressed"

    report = api(f"compare/{VIEW}/")
    shown = {row["test"]: row["state"] for row in report["tests"]}
    red = {test: state for test, state in shown.items() if state in ("extreme", "regressed")}
    assert red == expected
    # Sensible: the quarter-flaky test and the break are extreme, the tenth-flaky one regressed,
    # and the rare flake and the test as flaky on CUDA are noise.
    names = {test.rsplit("::", 1)[1]: state for test, state in red.items()}
    assert names["test_compare_cpu_topk_float32"] == "extreme"
    assert names[BROKEN_TEST] == "extreme"
    assert names["test_stream_wait_event"] == "regressed"
    assert "test_caching_allocator_stats" not in names
    assert "test_grid_sample_float32" not in names
