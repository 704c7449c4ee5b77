"""A compare view's report over a seeded history with known truth (compare_scenario.py):
its counts equal the uploaded outcomes', its regressed set equals an independent computation of
Sippy's rules with scipy's Fisher test, and each red row carries its sentence."""

import pytest
from scipy.stats import fisher_exact

from parity.models import Backend, CompareView
from parity.pure.compare import CompareRules, CompareState
from parity.result_reads import compare_preview, compare_report
from tests.parity.compare_scenario import STATES, T, compare_upload, counts_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(xla, ingest, eager_errors_propagate):
    runs = compare_upload(ingest)
    view = CompareView.objects.create(
        project=xla,
        name="tpu-vs-cpu",
        sample=Backend.objects.get(project=xla, name="tpu"),
        basis=Backend.objects.get(project=xla, name="cpu"),
    )
    return view, runs


def independent_states(runs, rules: CompareRules) -> dict[str, str]:
    """Sippy's rules, written again here, with scipy's Fisher test."""
    sample, basis = counts_of(runs["tpu"]), counts_of(runs["cpu"])
    states = {}
    for test in sample.keys() | basis.keys() | {T.format("skipped_tpu")}:
        (sp, sf), (bp, bf) = sample.get(test, (0, 0)), basis.get(test, (0, 0))
        if sp + sf == 0:
            states[test] = "missing_sample"
            continue
        if bp + bf == 0:
            states[test] = "missing_basis"
            continue
        drop = 100 * bp / (bp + bf) - 100 * sp / (sp + sf)
        alpha = 1 - rules.confidence / 100
        table = [[sf, sp], [bf, bp]]
        if drop > rules.tolerance and sf >= rules.min_failures:
            p = fisher_exact(table, alternative="greater")[1]
            states[test] = (
                ("extreme" if drop > 15 else "regressed") if p < alpha else "no_difference"
            )
        elif drop < 0 and fisher_exact(table, alternative="less")[1] < alpha:
            states[test] = "improved"
        else:
            states[test] = "no_difference"
    return states


def test_the_report_counts_the_window_and_equals_an_independent_fisher_test(
    seeded, django_assert_num_queries
):
    # One history serves every assertion: it takes 80 uploads.
    view, runs = seeded
    # The plan setting, one statement counting every test (no query per test), the reset.
    with django_assert_num_queries(3):
        report = compare_report(view=view)
    got = {row.test: row.state.value for row in report.rows}

    assert got == independent_states(runs, CompareRules())
    assert got == {T.format(name): state for name, state in STATES.items()}  # the designed truth
    sample, basis = counts_of(runs["tpu"]), counts_of(runs["cpu"])
    for row in report.rows:  # the runs outside the window, on a PR and incomplete do not count
        assert (row.sample.passed, row.sample.failed) == sample.get(row.test, (0, 0))
        assert (row.basis.passed, row.basis.failed) == basis.get(row.test, (0, 0))
    assert (report.sample_runs, report.basis_runs) == (39, 39)
    # Worst first: the red rows lead.
    assert [r.state.value for r in report.rows[:2]] == ["extreme", "regressed"]

    # The p-values are scipy's.
    for row in report.rows:
        if row.judgement.p is None:
            continue
        table = [[row.sample.failed, row.sample.passed], [row.basis.failed, row.basis.passed]]
        side = "less" if row.state == CompareState.IMPROVED else "greater"
        assert row.judgement.p == pytest.approx(fisher_exact(table, alternative=side)[1], rel=1e-9)

    # A red row carries its sentence.
    rows = {r.test: r for r in report.rows}
    assert rows[T.format("regressed")].sentence == (
        "pass rate 100% on cpu (n=39) vs 87% on tpu (n=39); Fisher p = 0.027"
    )
    assert rows[T.format("extreme")].sentence == (
        "pass rate 100% on cpu (n=39) vs 49% on tpu (n=39); Fisher p < 0.001"
    )
    assert rows[T.format("only_cpu")].sentence == (
        "no passed or failed run on tpu in the window; pass rate 100% on cpu (n=39)"
    )

    # A state filter keeps the counts whole.
    only = compare_report(view=view, state=CompareState.REGRESSED)
    assert [r.test for r in only.rows] == [T.format("regressed")]
    assert only.counts[CompareState.NO_DIFFERENCE] == 3

    # Other settings give the independent answer too.
    view.confidence, view.tolerance, view.min_failures = 99.0, 2.0, 2
    view.save()
    got = {row.test: row.state.value for row in compare_report(view=view).rows}
    assert got == independent_states(runs, CompareRules(99.0, 2.0, 2))
    assert got[T.format("regressed")] == "no_difference"  # p = 0.027 is not below 0.01

    # The preview lists the tests that would change state, and writes nothing.
    view.refresh_from_db()
    view.confidence, view.tolerance, view.min_failures = 95.0, 5.0, 3
    view.save()
    proposed = CompareView(
        project=view.project, name=view.name, sample=view.sample, basis=view.basis,
        days=view.days, confidence=99.0, tolerance=5.0, min_failures=1,
    )  # fmt: skip
    changes = compare_preview(view=view, proposed=proposed)
    assert [(c.test, c.before.state.value, c.after.state.value) for c in changes] == [
        (T.format("regressed"), "regressed", "no_difference"),
    ]
    view.refresh_from_db()
    assert view.confidence == 95.0
    # A shorter window is read again: the first days' runs leave it.
    proposed.days, proposed.confidence, proposed.min_failures = 3, 95.0, 3
    short = compare_preview(view=view, proposed=proposed)
    assert short and all(c.after is None or c.after.sample.total <= 12 for c in short)
