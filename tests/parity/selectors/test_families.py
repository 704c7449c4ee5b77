"""Backend families (``parity.selectors.families`` and the family roll-ups of the overview,
heatmap, matrix and digest): each number against a count by hand of the runs in
``tests/parity/families_scenario.py``."""

import pytest

from parity import selectors
from parity.models import Project
from parity.selectors import families
from tests.parity.families_scenario import (
    FAMILY,
    VARIANTS,
    A,
    B,
    failing_by_hand,
    passing_by_hand,
    tid,
    upload_families,
)


@pytest.fixture
def rocm(upload_run, xla) -> Project:
    return upload_families(upload_run, xla)


def variants_failing(test: str) -> set[str]:
    return failing_by_hand()[test] & set(VARIANTS)


def test_families_of_groups_variants_under_their_family(rocm, django_assert_num_queries):
    with django_assert_num_queries(1):
        found = families.families_of(project=rocm)

    assert found.variants == {FAMILY: sorted(VARIANTS)}
    assert found.family_of["rocm-gfx90a"] == FAMILY and found.family_of["tpu"] == "tpu"
    assert found.members("tpu") == ["tpu"]
    assert found.kin_first("rocm-gfx942", ["tpu", "rocm-navi31", "rocm-gfx90a"]) == [
        "rocm-gfx90a",
        "rocm-navi31",
        "tpu",
    ]


def test_the_overview_rolls_a_family_up_above_its_variants(rocm, django_assert_num_queries):
    with django_assert_num_queries(4):  # the three of a flat project, and the families' failing
        (card,) = selectors.project_cards(projects=[rocm])

    groups = {g.head.name: g for g in card.groups}
    assert list(groups) == ["cpu", "gpu", "neuron", FAMILY, "tpu"]
    assert [v.name for v in groups[FAMILY].variants] == sorted(VARIANTS)
    assert groups["tpu"].variants == [] and groups["tpu"].rollup is None
    rollup = groups[FAMILY].rollup
    expected = {}
    for variant in sorted(VARIANTS):
        passing, compared = passing_by_hand(variant)
        expected[variant] = passing / compared
    assert dict(zip(rollup.variants, (s.headline for s in rollup.scores), strict=True)) == expected
    assert (rollup.low, rollup.high) == (min(expected.values()), max(expected.values()))
    by_test = [variants_failing(t) for t in failing_by_hand()]
    assert rollup.failing == families.FamilyFailing(
        compared=3,
        everywhere=sum(f == set(VARIANTS) for f in by_test),
        somewhere=sum(bool(f) for f in by_test),
    )
    assert (rollup.failing.everywhere, rollup.failing.somewhere) == (1, 4)


def test_a_project_without_families_reads_the_overview_in_three_queries(
    upload_run, xla, django_assert_num_queries
):
    upload_run("cpu", {tid(A, 1): "passed"}, day="2026-04-01")
    with django_assert_num_queries(3):
        (card,) = selectors.project_cards(projects=[xla])
    assert card.families == {} and all(not g.variants for g in card.groups)


def test_family_tests_says_on_how_many_arches_each_test_fails(rocm, django_assert_num_queries):
    with django_assert_num_queries(2):
        found = families.family_tests(project=rocm, family=FAMILY, limit=2)

    by_hand = {t: variants_failing(t) for t in failing_by_hand() if variants_failing(t)}
    assert found.variants == sorted(VARIANTS) and found.total == len(by_hand) == 4
    assert found.everywhere == 1
    # The most arches first, then by test; cut at the limit.
    ordered = sorted(by_hand, key=lambda t: (-len(by_hand[t]), t))
    assert [(t.test, t.failing, t.of) for t in found.tests] == [
        (t, sorted(by_hand[t]), 3) for t in ordered[:2]
    ]
    assert found.tests[0].test == tid(A, 1)
    # Every test counted, past the limit too.
    spread = [len(f) for f in by_hand.values()]
    assert found.by_count == {n: spread.count(n) for n in set(spread)} == {3: 1, 2: 1, 1: 2}


def test_also_failing_lists_the_familys_variants_first(rocm, django_assert_num_queries):
    page = list(selectors.gaps_list(project=rocm).filter(backend__name="rocm-gfx942"))
    with django_assert_num_queries(2):
        families.gaps_also_failing_attach(page, project=rocm)

    by_test = {gap.test.key: gap.also_failing for gap in page}
    failing = failing_by_hand()
    for key, also in by_test.items():
        others = failing[key] - {"rocm-gfx942"}
        kin = sorted(others & set(VARIANTS))
        assert also.backends == kin + sorted(others - set(VARIANTS))
        assert (also.family, also.family_compared) == (FAMILY, 3)
        assert also.family_failing == len(variants_failing(key))
    assert by_test[tid(A, 1)].backends == ["rocm-gfx90a", "rocm-navi31", "tpu"]
    assert by_test[tid(A, 1)].fails_on == "3 of 3"
    assert by_test[tid(A, 2)].backends == ["rocm-navi31"]


def test_also_failing_of_a_flat_backend_names_no_family(rocm, django_assert_num_queries):
    page = list(selectors.gaps_list(project=rocm).filter(backend__name="tpu"))
    with django_assert_num_queries(1):  # no variant's gap on the page: no family to count
        families.gaps_also_failing_attach(page, project=rocm)

    (gap,) = page
    assert gap.also_failing.backends == sorted(VARIANTS)
    assert gap.also_failing.fails_on == ""


def test_an_intended_gap_elsewhere_is_not_failing_there(rocm):
    from parity.models import Gap

    Gap.objects.filter(backend__name="tpu", test__key__endswith="test_1").update(intended=True)
    page = list(selectors.gaps_list(project=rocm).filter(backend__name="rocm-gfx90a"))
    families.gaps_also_failing_attach(page, project=rocm)

    a1 = next(g for g in page if g.test.file == A and g.test.name == "test_1")
    assert "tpu" not in a1.also_failing.backends
    b1 = next(g for g in page if g.test.file == B)
    assert b1.also_failing.backends == [] and b1.also_failing.fails_on == "1 of 3"


def test_the_test_page_says_where_else_it_fails_without_another_query(rocm):
    from parity import result_reads
    from parity.models import TestCase

    test = TestCase.objects.get(project=rocm, file=A, name="test_1")
    page = result_reads.testcase_page(project=rocm, test=test)

    lines = {line.backend: line for line in page.lines}
    assert lines["cpu"].also_failing is None
    assert lines["rocm-gfx90a"].also_failing.backends == ["rocm-gfx942", "rocm-navi31", "tpu"]
    assert lines["rocm-gfx90a"].also_failing.fails_on == "3 of 3"
    assert lines["tpu"].also_failing.backends == sorted(VARIANTS)


def cell_of(heatmap, row: str, backend: str):
    found = next(r for r in heatmap.rows if r.name == row)
    return next(c for c in found.cells if c.backend == backend)


def test_the_heatmap_by_variant_drops_a_family_row_that_never_ran(rocm, django_assert_num_queries):
    with django_assert_num_queries(4):
        heatmap = selectors.heatmap(project=rocm)

    columns = [b.backend for b in heatmap.backends]
    assert columns == ["cpu", "gpu", "neuron", *sorted(VARIANTS), "tpu"]
    assert heatmap.has_families and heatmap.by == "variant"
    assert [b.backend for b in heatmap.cards] == columns


def test_the_heatmap_by_family_shows_each_familys_worst_variant(rocm, django_assert_num_queries):
    with django_assert_num_queries(4):  # as many as by variant
        heatmap = selectors.heatmap(project=rocm, query=selectors.HeatmapQuery(by="family"))

    assert [b.backend for b in heatmap.backends] == ["cpu", "gpu", "neuron", FAMILY, "tpu"]
    assert FAMILY not in [b.backend for b in heatmap.cards]  # it never ran: no card either
    failing = failing_by_hand()
    for file in (A, B):
        tests = [t for t in failing if t.startswith(file)]
        # Per variant, the share of the file's reference-passing tests passing there.
        shares = {v: sum(v not in failing[t] for t in tests) / len(tests) for v in sorted(VARIANTS)}
        worst = min(shares, key=lambda v: (shares[v], v))
        cell = cell_of(heatmap, file, FAMILY)
        assert (cell.worst, cell.parity) == (worst, shares[worst])
        assert cell.variants == 3
        assert cell.variants_failing == sum(shares[v] < 1 for v in shares)
    assert cell_of(heatmap, A, FAMILY).worst == "rocm-navi31"  # a::3 missing too
    assert (cell_of(heatmap, B, FAMILY).worst, cell_of(heatmap, B, FAMILY).variants_failing) == (
        "rocm-gfx90a",
        1,
    )
    # Sorting by a family's column orders its rows by that family's worst cells.
    by_rocm = selectors.heatmap(
        project=rocm, query=selectors.HeatmapQuery(by="family", sort=FAMILY)
    )
    assert [r.name for r in by_rocm.rows] == [A, B]


def test_a_project_without_families_ignores_by_family(upload_run, xla):
    upload_run("cpu", {tid(A, 1): "passed"}, day="2026-04-01")
    heatmap = selectors.heatmap(project=xla, query=selectors.HeatmapQuery(by="family"))
    assert (heatmap.by, heatmap.has_families) == ("variant", False)
    assert [b.backend for b in heatmap.backends] == ["cpu", "gpu", "neuron", "tpu"]


def test_the_matrix_by_family_counts_a_test_passing_only_where_every_arch_passes(
    rocm, django_assert_num_queries
):
    with django_assert_num_queries(3):
        by_variant = selectors.backend_matrix(project=rocm)
    with django_assert_num_queries(3):
        by_family = selectors.backend_matrix(project=rocm, by="family")

    assert FAMILY not in by_variant.backends  # its own row never ran
    assert by_variant.has_families and by_variant.by == "variant"
    assert by_family.backends == ["cpu", "gpu", "neuron", FAMILY, "tpu"]
    assert by_family.families == {FAMILY: sorted(VARIANTS)}
    # By hand: rocm has a test when an arch runs it, passes it when every arch running it does.
    from tests.parity.families_scenario import RUNS

    having = {t for v in VARIANTS for t in RUNS[v]}
    passing = {t for t in having if all(RUNS[v].get(t, "passed") == "passed" for v in VARIANTS)}
    totals = {t.backend: t for t in by_family.totals}
    assert (totals[FAMILY].tests, totals[FAMILY].passing) == (len(having), len(passing))
    cpu_passing = {t for t, o in RUNS["cpu"].items() if o == "passed"}
    assert by_family.pair("cpu", FAMILY).passes_a_not_b == len(cpu_passing - passing)
    tpu_passing = {t for t, o in RUNS["tpu"].items() if o == "passed"}
    assert by_family.pair(FAMILY, "tpu").passes_a_not_b == len(passing - tpu_passing)
    assert by_family.pair("cpu", "tpu") == by_variant.pair("cpu", "tpu")  # flat ones unchanged


def test_the_digest_adds_up_a_familys_new_gaps_and_its_arches(rocm):
    import datetime

    from parity.digest.render import digest_render
    from parity.pure.weeks import Week
    from parity.selectors.digest import digest_content
    from tests.parity.families_scenario import DAY

    content = digest_content(project=rocm, week=Week.of(datetime.date.fromisoformat(DAY)))

    failing = failing_by_hand()
    per_variant = {v: sum(v in f for f in failing.values()) for v in VARIANTS}
    (rocm_new,) = content.new_by_family
    assert rocm_new.family == FAMILY and rocm_new.of == 3
    assert rocm_new.total == sum(per_variant.values()) == 7
    assert rocm_new.variants == sorted(v for v, n in per_variant.items() if n)
    assert rocm_new.untracked == rocm_new.total  # nothing is triaged
    rendered = digest_render(content)
    line = "rocm: 7 new gaps (7 untracked), on 3 of 3 arches"
    assert line in rendered.text
    html = " ".join(rendered.html.split())
    assert f"<li>{line} (rocm-gfx90a, rocm-gfx942, rocm-navi31)</li>" in html
