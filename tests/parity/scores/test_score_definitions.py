"""The score's definition is a project setting (``parity.pure.scores``): on one AMD-shaped
fixture (a CUDA reference, a ROCm backend), parity's numbers through ingest, the engine and the
API equal a spreadsheet's, computed here independently from the same outcomes, by AMD's two
definitions (ROCm/pytorch#3371: a disagreement on any difference, or only where CUDA passed)."""

import pytest

from parity.models import Project
from parity.pure.scores import Counts, Definition, scores
from tests.junit_builder import Case, junit_xml

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
]


def spreadsheet(*, any_difference: bool) -> float:
    """AGREE % as a team's sheet computes it: of CUDA's tests, the share that agree."""
    disagree = sum(
        (cuda != rocm) if any_difference else (cuda == "passed" and rocm != "passed")
        for _, cuda, rocm in OUTCOMES
    )
    return 1 - disagree / len(OUTCOMES)


def report(backend: str) -> bytes:
    column = 1 if backend == "cuda" else 2
    cases = [
        Case("test.test_ops.TestOps", row[0], outcome=row[column], message="not supported")
        for row in OUTCOMES
        if row[column] is not None
    ]
    return junit_xml(*cases)


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


def rocm_score(api, project: Project, **setting) -> tuple[float, float]:
    from parity.services.projects import project_score_set

    project_score_set(project=project, **setting)
    body = api.get(f"/api/v1/projects/{project.slug}/parity/").json()
    rocm = next(b for b in body["backends"] if b["backend"] == "rocm")
    return rocm["score"], rocm["score_raw"]


@pytest.mark.django_db
def test_parity_equals_the_spreadsheet_by_each_definition(api, amd):
    any_difference, _ = rocm_score(api, amd, definition="agree_any")
    where_passed, _ = rocm_score(api, amd, definition="agree_reference_passed")
    default, _ = rocm_score(api, amd, definition="reference_passing")

    assert any_difference == round(spreadsheet(any_difference=True), 4) == 0.8879
    assert where_passed == round(spreadsheet(any_difference=False), 4) == 0.9439
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
