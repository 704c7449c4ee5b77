"""Families on the pages: the overview's roll-up line, the heatmap's and matrix's ``?by=``
switch, "also failing in" on the gaps page, its CSV, the gaps API and the test page; numbers
against a count by hand of ``tests/parity/families_scenario.py``."""

import csv
import io
import re

import pytest

from parity.models import Project, TestCase
from tests.parity.dashboard.conftest import text
from tests.parity.families_scenario import (
    FAMILY,
    VARIANTS,
    A,
    failing_by_hand,
    passing_by_hand,
    upload_families,
)

P = "/p/pytorch-xla"


@pytest.fixture
def rocm(upload_run, xla) -> Project:
    return upload_families(upload_run, xla)


def test_the_overview_shows_the_family_line_above_its_variants(client, rocm):
    html = text(client.get("/"))

    table = html.split('class="backends"')[1].split("</table>")[0]
    order = re.findall(r'<tr (?:class="\w+" )?data-(?:backend|family)="([\w-]+)"', table)
    assert order == ["cpu", "gpu", "neuron", FAMILY, *sorted(VARIANTS), "tpu"]
    assert html.count('class="variant" data-family="rocm"') == 3
    everywhere = sum(f >= set(VARIANTS) for f in failing_by_hand().values())
    somewhere = sum(bool(f & set(VARIANTS)) for f in failing_by_hand().values())
    shares = sorted(round(100 * p / c) for p, c in map(passing_by_hand, VARIANTS))
    line = (
        f"3 arches; scores {shares[0]}–{shares[-1]} %; {everywhere} test fails on every arch, "
        f"{somewhere} on some"
    )
    assert line in html
    assert line == "3 arches; scores 40–60 %; 1 test fails on every arch, 4 on some"


def test_the_heatmap_offers_by_family_and_draws_a_family_column(client, rocm):
    by_variant = text(client.get(f"{P}/"))
    assert 'id="heatmap-by"' in by_variant
    heads = re.findall(r'<th scope="col" class="col"[^>]*>.*?</th>', by_variant)
    assert [re.sub(r"<[^>]+>|[▲▼]", "", h).strip() for h in heads] == [
        "cpuref",
        "gpu",
        "neuron",
        *sorted(VARIANTS),
        "tpu",
    ]

    html = text(client.get(f"{P}/?by=family"))
    cell = re.search(rf'<tr data-name="{A}">.*?data-backend="{FAMILY}"[^>]*>(.*?)</td>', html)[1]
    # test_a.py: navi31 passes none of the three tests cpu passes; all three arches have gaps.
    assert "backend=rocm-navi31" in cell and "worst of its variants, rocm-navi31" in cell
    assert "gaps on 3 of 3 variants with a current run" in cell
    assert " ".join(re.sub(r"<[^>]+>", "", cell).split()) == "0/3 on 3 of 3 arches"
    assert '<input type="hidden" name="by" value="family">' in html


def test_the_gaps_page_says_where_else_each_test_fails(client, rocm):
    html = text(client.get(f"{P}/gaps/?open=1&backend=rocm-gfx942"))

    lines = re.findall(r'<div class="also-failing muted">(.*?)</div>', html)
    failing = failing_by_hand()
    expected = []
    for test in sorted(t for t, f in failing.items() if "rocm-gfx942" in f):
        others = failing[test] - {"rocm-gfx942"}
        kin = sorted(others & set(VARIANTS))
        on = f"fails on {len(kin) + 1} of 3 rocm arches"
        expected.append(f"{on} · also failing in {', '.join(kin + sorted(others - set(VARIANTS)))}")
    assert sorted(lines) == sorted(expected)
    assert "fails on 3 of 3 rocm arches · also failing in rocm-gfx90a, rocm-navi31, tpu" in lines


def test_the_gaps_csv_and_api_carry_also_failing(client, rocm):
    response = client.get(f"{P}/gaps.csv?open=1&backend=tpu")
    table = list(csv.reader(io.StringIO(response.content.decode())))
    column = table[0].index("also_failing")
    (row,) = table[1:]
    assert row[column] == " ".join(sorted(VARIANTS))

    api = client.get("/api/v1/projects/pytorch-xla/gaps/?backend=rocm-gfx90a").json()
    by_test = {g["test"].rsplit("::", 1)[1]: g for g in api["results"]}
    assert by_test["test_1"]["also_failing"] in (
        ["rocm-gfx942", "rocm-navi31", "tpu"],  # test_a.py's test_1
        [],  # test_b.py's test_1: only gfx90a fails it
    )
    a1 = next(g for g in api["results"] if g["test"].startswith(A) and g["test"].endswith("_1"))
    assert (a1["also_failing"], a1["fails_on"]) == (["rocm-gfx942", "rocm-navi31", "tpu"], "3 of 3")
    tpu = client.get("/api/v1/projects/pytorch-xla/gaps/?backend=tpu").json()["results"]
    assert tpu[0]["fails_on"] is None


def test_the_test_page_says_where_else_it_fails(client, rocm):
    test = TestCase.objects.get(project=rocm, file=A, name="test_2")
    html = text(client.get(f"{P}/tests/{test.pk}/"))

    row = re.search(r'<tr data-backend="rocm-gfx942">.*?</tr>', html)[0]
    assert "fails on 2 of 3 rocm arches · also failing in rocm-navi31" in row


def test_the_matrix_by_family_has_one_row_per_family(client, rocm):
    html = text(client.get(f"{P}/matrix/?by=family"))

    assert 'id="matrix-by"' in html and 'id="matrix-by-note"' in html
    body = html.split('id="test-matrix"')[1].split("</table>")[0]
    assert re.findall(r'<tr data-backend="([\w-]+)">', body) == [
        "cpu",
        "gpu",
        "neuron",
        FAMILY,
        "tpu",
    ]
    csv_rows = client.get(f"{P}/matrix.csv?by=family").content.decode().splitlines()
    assert any(line.startswith("cpu,rocm,") for line in csv_rows)
    assert not any("rocm-gfx942" in line for line in csv_rows)


def test_a_family_cell_of_the_matrix_opens_the_variant_matrix(client, rocm):
    html = text(client.get(f"{P}/matrix/?by=family"))
    body = html.split('id="test-matrix"')[1].split("</table>")[0]
    row = re.search(r'<tr data-backend="cpu">.*?</tr>', body)[0]
    assert 'data-b="rocm"><a href="?#tests"' in row  # no pair page of a family
    assert f'data-b="tpu"><a href="{P}/matrix/pair/?a=cpu&b=tpu#passes-only-a"' in row


def test_the_heatmap_by_family_lists_the_tests_failing_on_the_most_arches(client, rocm):
    html = text(client.get(f"{P}/?by=family"))

    section = html.split('class="card family-tests" data-family="rocm"')[1].split("</section>")[0]
    by_hand = {t: f & set(VARIANTS) for t, f in failing_by_hand().items() if f & set(VARIANTS)}
    ordered = sorted(by_hand, key=lambda t: (-len(by_hand[t]), t))
    listed = [
        (test, " ".join(re.sub(r"<[^>]+>", "", fails).split()))
        for test, fails in re.findall(
            r'<td class="test"><a [^>]*>([^<]+)</a></td> <td>(.*?)</td>', section
        )
    ]
    assert listed == [
        (t, f"{len(by_hand[t])} of 3: {', '.join(sorted(by_hand[t]))}") for t in ordered
    ]
    assert "1 test fails on every one of the 3 with a current run, 4 on some." in section
    assert "family-tests" not in text(client.get(f"{P}/"))  # by variant: none


def test_the_exemptions_page_lists_a_variant_s_files_never_the_family_s(client, rocm):
    """The family never runs: its file list would say every file is missing."""
    rocm.backends.filter(name__in=["gpu", "neuron"]).delete()  # no runs: rocm sorts first

    default = text(client.get(f"{P}/exemptions/"))
    filtered = text(client.get(f"{P}/exemptions/?backend={FAMILY}"))

    first = sorted(VARIANTS)[0]
    assert f"{first}'s current run ran" in default
    assert f"{first}'s current run ran" in filtered
    assert f"{FAMILY}'s current run" not in default + filtered
