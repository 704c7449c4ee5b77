"""The score's definition is a project setting (``parity.pure.scores``): on one AMD-shaped
fixture (a CUDA reference, a ROCm backend), parity's numbers through ingest, the engine and the
API equal a spreadsheet's, computed here independently from the same outcomes, by AMD's two
definitions (ROCm/pytorch#3371: a disagreement on any difference, or only where CUDA passed)."""

import dataclasses

import pytest

from parity.models import Project
from parity.pure.scores import Counts, Definition, scores
from tests.junit_builder import Case, junit_xml
from tests.parity.dashboard.conftest import text

# (test, CUDA's outcome, ROCm's outcome; None: absent from the run).
OUTCOMES = [
    *((f"test_add_{i}", "passed", "passed") for i in range(90)),
    *((f"test_conv_{i}", "passed", "failed") for i in range(3)),
    *((f"test_fft_{i}", "passed", "skipped") for i in range(2)),
    ("test_fused_attention", "passed", None),
    *((f"test_sparse_{i}", "skipped", "skipped") for i in range(5)),
    *((f"test_cudnn_{i}", "skipped", "passed") for i in range(4)),  # differs; CUDA skipped
    ("test_flaky_alloc", "failed", "passed"),  # differs; CUDA failed
    ("test_tf32", "skipped", None),  # differs; absent on ROCm
    # Declared not applicable on ROCm in one test below (an out-of-tree exclusion): the first
    # differs (ROCm lacks it), the second agrees.
    ("test_nvtx_range", "skipped", None),
    ("test_nvtx_mark", "skipped", "skipped"),
]
NVTX = {"test_nvtx_range", "test_nvtx_mark"}


def spreadsheet(
    *, any_difference: bool, declared: set[str] = frozenset(), counts_declared: bool = False
) -> float:
    """AGREE % as a team's sheet computes it: of CUDA's tests, the share that agree. A row
    ``declared`` not applicable on ROCm whose outcome differs there is left out of the sheet,
    unless ``counts_declared`` (then it is a row as any other; one whose outcome agrees is
    simply an agreement)."""
    rows = disagree = 0
    for test, cuda, rocm in OUTCOMES:
        if test in declared and cuda != rocm and not counts_declared:
            continue
        rows += 1
        disagree += (cuda != rocm) if any_difference else (cuda == "passed" and rocm != "passed")
    return 1 - disagree / rows


def report_cases(backend: str) -> list[Case]:
    column = 1 if backend == "cuda" else 2
    return [
        Case("test.test_ops.TestOps", row[0], outcome=row[column], message="not supported")
        for row in OUTCOMES
        if row[column] is not None
    ]


def report(backend: str) -> bytes:
    return junit_xml(*report_cases(backend))


@pytest.fixture
def amd(db, ingest, project: Project):
    for name in ("cuda", "rocm"):
        project.backends.create(name=name)
    project.reference_backend = project.backends.get(name="cuda")
    project.save()
    for backend in ("cuda", "rocm"):
        reply = ingest(
            ("report.xml", report(backend)), backend=backend, complete="true", branch="main"
        )
        assert reply.status_code == 202, reply.content
    return project


def rocm_parity(api, project: Project, **setting) -> dict:
    from parity.services.projects import project_score_set

    project_score_set(project=project, **setting)
    body = api.get(f"/api/v1/projects/{project.slug}/parity/").json()
    return next(b for b in body["backends"] if b["backend"] == "rocm")


def rocm_score(api, project: Project, **setting) -> tuple[float, float]:
    rocm = rocm_parity(api, project, **setting)
    return rocm["score"], rocm["score_raw"]


@pytest.mark.django_db
def test_parity_equals_the_spreadsheet_by_each_definition(api, amd):
    any_difference, _ = rocm_score(api, amd, definition="agree_any")
    where_passed, _ = rocm_score(api, amd, definition="agree_reference_passed")
    default, _ = rocm_score(api, amd, definition="reference_passing")

    assert any_difference == round(spreadsheet(any_difference=True), 4) == 0.8807
    assert where_passed == round(spreadsheet(any_difference=False), 4) == 0.945
    assert default == round(90 / 96, 4)  # of the 96 tests CUDA passes, 90 pass on ROCm


@pytest.mark.django_db
def test_intended_gaps_count_only_where_the_project_says(api, amd):
    from parity.services.triage import TriageRequest, triage_create

    triage_create(
        project=amd,
        request=TriageRequest(
            kind="intended", backend="rocm", match="**::TestOps::test_fft_*", note="no rocFFT"
        ),
    )
    left_out, raw = rocm_score(api, amd, definition="agree_reference_passed")
    counted, _ = rocm_score(api, amd, definition="agree_reference_passed", counts_intended=True)

    assert counted == raw == round(spreadsheet(any_difference=False), 4)
    assert left_out == round(1 - 4 / (len(OUTCOMES) - 2), 4)  # the 2 fft tests out of both


def declare(api, amd, test: str, *, why: str) -> None:
    """Declare ROCm's ``TestOps.<test>`` (a glob) not applicable, through the API."""
    declared = api.post(
        f"/api/v1/projects/{amd.slug}/triage/",
        {
            "kind": "not_applicable",
            "backend": "rocm",
            "match": f"**::TestOps::{test}",
            "note": f"excluded by set_test_configs: {why}",
        },
        format="json",
    )
    assert declared.status_code == 201, declared.content


@pytest.mark.django_db
@pytest.mark.parametrize("counts_not_applicable", [False, True])
def test_a_declaration_applies_to_tests_the_reference_did_not_pass(api, amd, counts_not_applicable):
    declare(api, amd, "test_nvtx_*", why="no NVTX on ROCm")

    for definition, any_difference in (("agree_any", True), ("agree_reference_passed", False)):
        rocm = rocm_parity(
            api, amd, definition=definition, counts_not_applicable=counts_not_applicable
        )
        sheet = spreadsheet(
            any_difference=any_difference, declared=NVTX, counts_declared=counts_not_applicable
        )
        assert rocm["score"] == round(sheet, 4), definition
        # The raw figure counts the declaration whatever the project's switch says.
        raw = spreadsheet(any_difference=any_difference, declared=NVTX, counts_declared=True)
        assert rocm["score_raw"] == round(raw, 4), definition
        # test_nvtx_range is counted apart: outside the 6 other tests CUDA did not pass whose
        # outcome differs on ROCm, and outside the whole (CUDA's run less that one test).
        assert (
            rocm["not_applicable_not_passed"],
            rocm["differ_not_passed"],
            rocm["reference_tests"],
        ) == (1, 6, len(OUTCOMES) - 1)
    assert rocm_score(api, amd, definition="reference_passing")[0] == round(90 / 96, 4)


def test_each_definition_on_counts():
    # 10 tests the reference passes (1 intended, 2 not applicable and failing), 8 pass here;
    # the reference has 4 more tests, 1 of which differs here.
    counts = Counts(
        passing=7, compared=8, intended=1, not_applicable=2, reference_tests=12,
        differ_not_passed=1,
    )  # fmt: skip
    assert scores(counts).headline == 7 / 7
    assert scores(counts).raw == 7 / 10
    agree = Definition(kind="agree_any")
    assert scores(counts, agree).headline == 1 - 1 / 11  # 11: 12 less the intended one
    assert scores(counts, agree).raw == 1 - 4 / 14  # 1 intended + 2 n/a + 1 differing of 14
    ref_passed = Definition(kind="agree_reference_passed", counts_not_applicable=True)
    assert scores(counts, ref_passed).headline == 1 - 2 / 13

    # And 1 more the reference did not pass differs here but is declared not applicable: out of
    # the whole unless counted, then as if undeclared: a disagreement by agree_any only.
    declared = dataclasses.replace(counts, not_applicable_not_passed=1)
    assert scores(declared, agree).headline == scores(counts, agree).headline
    assert scores(declared, agree).raw == 10 / 15  # 5 of 15 fail
    assert scores(declared, agree).not_applicable == 3
    assert scores(declared, ref_passed).headline == 12 / 14  # the 2 n/a of 14 fail
    assert scores(declared).headline == scores(counts).headline  # the default reads none


def tf32_declaration_stale(api, project: Project) -> bool:
    listed = api.get(f"/api/v1/projects/{project.slug}/triage/").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    (row,) = [t for t in rows if t["kind"] == "not_applicable"]
    return row["stale"]


AGREEMENT_LINE = "rocm: keeps 1 test the reference did not pass out of the agreement score"


@pytest.mark.django_db
def test_a_declaration_an_agreement_score_uses_is_not_stale(api, client, ingest, amd):
    # test_tf32: CUDA skips it, ROCm lacks it. No gap is open on it (CUDA does not pass it), so
    # only an agreement score uses the declaration, and removing it would change that score.
    from parity.services.projects import project_score_set

    project_score_set(project=amd, definition="agree_any")
    declare(api, amd, "test_tf32", why="no TF32 on ROCm")
    assert tf32_declaration_stale(api, amd) is False
    page = f"/p/{amd.slug}/not-applicable/"
    assert AGREEMENT_LINE in text(client.get(page))
    assert "agreement score compares the reference's other tests too" in text(client.get(page))

    # ROCm's next runs, each recomputed: one skips test_tf32 as CUDA does (the declaration
    # covers nothing), the next lacks it again.
    for run, tf32, stale in (("rocm-2", "skipped", True), ("rocm-3", None, False)):
        cases = [c for c in report_cases("rocm") if c.name != "test_tf32"]
        if tf32:
            cases.append(Case("test.test_ops.TestOps", "test_tf32", outcome=tf32))
        reply = ingest(
            ("report.xml", junit_xml(*cases)), backend="rocm", complete="true", branch="main",
            run=run, commit=run[-1] * 40,
        )  # fmt: skip
        assert reply.status_code == 202, reply.content
        assert tf32_declaration_stale(api, amd) is stale, run
    assert rocm_parity(api, amd)["not_applicable_not_passed"] == 1

    # The default score reads no test CUDA did not pass: nothing uses the declaration there.
    project_score_set(project=amd, definition="reference_passing")
    assert tf32_declaration_stale(api, amd) is True
    assert AGREEMENT_LINE not in text(client.get(page))

    project_score_set(project=amd, definition="agree_reference_passed")
    assert tf32_declaration_stale(api, amd) is False
