"""One state per (test, backend), the same on every surface (issue 45, findings 1 and 2).

A rocm family of two arches against cpu. On gfx90a the file ``test/c.py`` crashed: its tests
are lost to infrastructure, in no score and in none of untracked. On rocm (both arches) the
file ``test/n.py`` is declared not applicable (as ``set_test_configs`` declares an
out-of-tree backend's exclusions): not a gap, not "missing". Every count below is read off
the table by hand.

    test        cpu    gfx942   gfx90a
    a.py::t1    pass   failed   failed
    a.py::t2    pass   failed   pass
    c.py::t1    pass   failed   (crashed)
    c.py::t2    pass   pass     (crashed)
    n.py::t1    pass   -        -          (declared not applicable on rocm)
"""

import json
import re

import pytest

from parity.models import Backend, Gap, Project, TestCase
from parity.selectors.families import families_failing, family_tests
from parity.selectors.queue import triage_queue
from parity.services.triage import TriageRequest, triage_create
from tests.parity.conftest import run_xml
from tests.parity.dashboard.conftest import text

A1, A2 = "test/a.py::TestA::test_1", "test/a.py::TestA::test_2"
C1, C2 = "test/c.py::TestC::test_1", "test/c.py::TestC::test_2"
N1 = "test/n.py::TestN::test_1"
BOOM = ("failed", "boom")
RUNS = {
    "cpu": {A1: "passed", A2: "passed", C1: "passed", C2: "passed", N1: "passed"},
    "gfx942": {A1: BOOM, A2: BOOM, C1: BOOM, C2: "passed"},
    "gfx90a": {A1: BOOM, A2: "passed"},
}
CRASHED = {"files": [{"file": "test/c.py", "signal": "SIGSEGV"}]}


@pytest.fixture
def rocm(xla, ingest, eager_errors_propagate) -> Project:
    Backend.objects.create(project=xla, name="rocm")
    triage_create(
        project=xla,
        request=TriageRequest(
            kind="not_applicable", backends=["rocm"], match="test/n.py", note="no NVTX"
        ),
    )
    for name, cases in RUNS.items():
        fields = {"backend": name, "run": f"{name}-1", "complete": "true"}
        if name != "cpu":
            fields.update(backend="rocm", attributes=json.dumps({"arch": name}))
        if name == "gfx90a":
            fields["run_manifest"] = json.dumps(CRASHED)
        response = ingest(("results.xml", run_xml(cases)), **fields)
        assert response.status_code == 202, response.content
    states = {
        (b, k): (s, na)
        for b, k, s, na in Gap.objects.filter(is_open=True).values_list(
            "backend__name", "test__key", "state", "not_applicable"
        )
    }
    assert states == {
        ("rocm-gfx942", A1): ("failed", False),
        ("rocm-gfx942", A2): ("failed", False),
        ("rocm-gfx942", C1): ("failed", False),
        ("rocm-gfx942", N1): ("missing", True),
        ("rocm-gfx90a", A1): ("failed", False),
        ("rocm-gfx90a", C1): ("crashed", False),
        ("rocm-gfx90a", C2): ("crashed", False),
        ("rocm-gfx90a", N1): ("missing", True),
    }
    return xla


def _id(key: str) -> int:
    return TestCase.objects.get(key=key).pk


def words(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_standing_puts_a_declaration_and_a_lost_file_before_the_gap():
    from parity.definitions import Standing, standing

    na = standing(gap_state="missing", not_applicable=True, source="set_test_configs:x.py")
    assert na == Standing("not_applicable", source="set_test_configs:x.py")
    assert not na.is_gap and na.label == "not applicable (set_test_configs:x.py)"
    lost = standing(gap_state="crashed", tracked=True)
    assert lost == Standing("lost", cause="crashed") and not lost.is_gap
    intended = standing(gap_state="failed", intended=True)
    assert intended.is_gap and not intended.scored(False) and intended.scored(True)
    assert standing(gap_state=None, pending=True).outcome == "pending"
    assert standing(gap_state="skipped").label == "skipped · untracked"


def test_the_family_line_counts_neither_lost_nor_declared_tests(rocm):
    family = Backend.objects.get(name="rocm")
    failing = families_failing(family_ids=[family.pk])[family.pk]
    # a::1 fails on both arches; a::2 and c::1 on gfx942 alone (c::1 was lost on gfx90a).
    assert (failing.compared, failing.everywhere, failing.somewhere) == (2, 1, 3)
    tests = family_tests(project=rocm, family="rocm")
    assert {t.test: t.failing for t in tests.tests} == {
        "test/a.py::TestA::test_1": ["rocm-gfx90a", "rocm-gfx942"],
        "test/a.py::TestA::test_2": ["rocm-gfx942"],
        "test/c.py::TestC::test_1": ["rocm-gfx942"],
    }


def test_also_failing_does_not_name_the_arch_that_lost_the_test(api, rocm):
    listed = api.get(
        f"/api/v1/projects/{rocm.slug}/gaps/", {"backend": "rocm-gfx942", "limit": 50}
    ).json()
    by_test = {g["test"]: g for g in listed["results"]}
    assert by_test[C1]["also_failing"] == []
    assert by_test[C1]["fails_on"] == "1 of 2"
    assert by_test[A1]["fails_on"] == "2 of 2"


def test_left_to_triage_counts_the_backends_own_gaps_only(api, client, rocm):
    queue = triage_queue(project=rocm)
    # gfx942: a::1, a::2, c::1; gfx90a: a::1. Neither the crashed file's nor the declared test.
    assert {h.backend: h.untracked for h in queue.headlines} == {
        "rocm-gfx942": 3,
        "rocm-gfx90a": 1,
    }
    assert queue.untracked == 4
    assert sum(g.gaps for g in queue.by_file.groups) == 4
    listed = api.get(
        f"/api/v1/projects/{rocm.slug}/gaps/", {"tracked": "false", "limit": 50}
    ).json()
    gaps = listed["results"] if isinstance(listed, dict) else listed
    assert sorted((g["backend"], g["test"]) for g in gaps) == [
        ("rocm-gfx90a", A1),
        ("rocm-gfx942", A1),
        ("rocm-gfx942", A2),
        ("rocm-gfx942", C1),
    ]


def test_the_test_api_says_not_applicable_and_lost_not_missing(api, rocm):
    declared = api.get(f"/api/v1/projects/{rocm.slug}/tests/{_id(N1)}/").json()
    gfx942 = declared["backends"]["rocm-gfx942"]
    assert gfx942["gap"] is None
    assert gfx942["standing"]["outcome"] == "not_applicable"
    lost = api.get(f"/api/v1/projects/{rocm.slug}/tests/{_id(C2)}/").json()
    gfx90a = lost["backends"]["rocm-gfx90a"]
    assert gfx90a["gap"] is None
    assert (gfx90a["standing"]["outcome"], gfx90a["standing"]["cause"]) == ("lost", "crashed")
    failing = lost["backends"]["rocm-gfx942"]
    assert (failing["gap"], failing["standing"]["outcome"]) == (None, "passed")


def test_the_test_and_file_pages_say_not_applicable(client, rocm):
    page = words(text(client.get(f"/p/{rocm.slug}/tests/{_id(N1)}/")))
    assert "not applicable" in page
    assert "missing untracked" not in page and "untracked" not in page
    grid = words(text(client.get(f"/p/{rocm.slug}/file/?path=test/n.py&backend=rocm-gfx942")))
    assert "not applicable on rocm-gfx942: 1 test" in grid
    assert "missing on rocm-gfx942" not in grid
    assert "though the reference passes them" not in grid


def test_the_test_page_says_lost_not_untracked_and_no_fails_on(client, rocm):
    page = words(text(client.get(f"/p/{rocm.slug}/tests/{_id(C1)}/")))
    assert "lost to infrastructure" in page
    row = page.split("rocm-gfx90a", 1)[1]
    assert not row.lstrip().startswith("– crashed untracked")
    # gfx942's gap: of the two arches only it fails c::1 (gfx90a lost it).
    assert "fails on 1 of 2" in page and "fails on 2 of 2" not in page


def test_an_intended_gap_reads_no_fails_on(api, client, rocm):
    """Issue 45 (Smaller): "fails on 1 of 2 rocm arches" under an intended gap counted the
    intended gap itself as failing."""
    triage_create(
        project=rocm,
        request=TriageRequest(
            kind="intended", backends=["rocm-gfx942"], match=A2, note="no such op on gfx942"
        ),
    )
    listed = api.get(
        f"/api/v1/projects/{rocm.slug}/gaps/", {"backend": "rocm-gfx942", "limit": 50}
    ).json()
    by_test = {g["test"]: g for g in listed["results"]}
    assert by_test[A2]["intended"] and by_test[A2]["fails_on"] is None
    page = words(text(client.get(f"/p/{rocm.slug}/tests/{_id(A2)}/")))
    assert "fails on" not in page
    gaps_page = words(text(client.get(f"/p/{rocm.slug}/gaps/?open=1&backend=rocm-gfx942")))
    # a::1 fails on both arches, c::1 on gfx942 alone (gfx90a lost it); a::2 is intended.
    assert gaps_page.count("fails on 2 of 2") == 1 and gaps_page.count("fails on 1 of 2") == 1
