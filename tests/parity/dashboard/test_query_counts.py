"""Every dashboard page and JSON endpoint reads a fixed number of queries, whatever the length
of the history: the counts below hold for the two days of ``dashboard_scenario`` and still hold
once a third, older day of runs is uploaded. Each count is the whole request's: access
(project, principal), the page's one selector, the project's empty-state check."""

import pytest
from django.test import Client

from parity.models import Gap, TestHistory
from parity.services.triage import TriageRequest, triages_create
from tests.parity.dashboard_scenario import A, tid, upload_history, upload_older_day
from tests.query_counts import gets, mismatches, query_counts

P = "/p/pytorch-xla"

# Anonymous visitor of a public project.
PAGES = {
    # readable projects, backends with their newest upload, uploads; headlines (the stored
    # snapshots'), burn-down; score trends (the sparklines)
    "overview": ("/", 6),
    "overview.json": (
        "/overview.json",
        4,
    ),  # ETag: readable projects, data version; projects, trend
    # project; backends + snapshots, file cells, files' owners, gaps, run files
    "heatmap": (f"{P}/", 6),
    "heatmap by folder": (f"{P}/?dir=1", 5),
    # project; backends, file cells, files' owners; names, pairs, 2 SETs, rows, triage,
    # numbers, cells; has runs
    "heatmap aligned": (f"{P}/?aligned=1", 13),
    "file": (f"{P}/file/?path={A}&backend=tpu", 11),  # project; 9 for the grid; has runs
    "test": (f"{P}/tests/{{test}}/", 10),  # project, test; 6 for the page (its owners); its
    # compare views (their rows: a second only when one is computed); has runs
    "search": (f"{P}/tests/?q=test_a", 4),  # project; the test it names, those holding it; has runs
    # Project, backend choices; 6 rows; skips and gaps per category; has runs
    "skip reasons": (f"{P}/skip-reasons/", 12),
    "skip-reasons.json": (f"{P}/skip-reasons.json", 6),  # project, backend choices, ETag; chart
    # Project, backend choices x2; 4 for the queue (a page of each grouping, the file rules,
    # the headlines), 2 for its groups' owners; has runs
    "queue": (f"{P}/queue/", 10),
    # Project, backend choices; 2 x (count, ids, rows, issues); their files' owners; where
    # else the new ones' tests fail (no variants here: one); the open gaps of any age; has runs
    "gaps": (f"{P}/gaps/", 16),  # one more: does any test have a suite (suite_gaps)
    # Project, backend choices (twice: the form unbound, then bound); the reasons' issues, the
    # files' owners, whether a backend has variants, where the tests fail; the gaps, whatever
    # their number.
    "gaps.csv": (f"{P}/gaps.csv?open=1", 9),  # the same
    # project; the import, its rules, the files' owners, open gaps per owner; has runs
    "owners": (f"{P}/owners/", 6),
    # project, backend choices x2; names, pairs, 2 SETs, rows, triage, gaps; has runs
    "gaps aligned": (f"{P}/gaps/?aligned=1", 11),
    "runs": (f"{P}/runs/", 12),  # project, backend choices; the page's run ids, then its
    # runs, uploads, current, baselines' uploads; the verdicts: gaps opened, closed, unrun
    # files; has runs
    # Project, run; the verdict's baseline, its one statement (opened, counts, closed gaps,
    # what it lacks) after a SET LOCAL of its plan, the closed gaps' reasons and issues, the
    # baseline's upload files, current, uploads, their files; how its files ran (run
    # manifests); has runs. The run's size changes none (tests/parity/selectors/test_run_detail.py).
    # the verdict reads conditioned triages and its failed uploads too (run health), and
    # whether any exemption was removed or expired since the baseline (uncovered gaps), and
    # the suites its uploads name (their tiers: whether it gates)
    "run": (f"{P}/runs/{{run}}/", 17),
    # project; backends, the suite map and its rows, the stored summaries (SuiteSummary),
    # the runs still pending; has runs. The history's length changes none.
    "suites": (f"{P}/suites/", 6),
    "suites.csv": (f"{P}/suites.csv", 5),  # the page's read without the session's
    "matrix": (f"{P}/matrix/", 5),  # project; backends, files, tests; has runs
    "matrix.csv": (f"{P}/matrix.csv", 4),  # project; backends, files, tests
    "pair": (f"{P}/matrix/pair/?a=cpu&b=tpu", 6),  # project, backend choices; 3; has runs
    "pair tests.csv": (f"{P}/matrix/pair/tests.csv?a=cpu&b=tpu", 5),  # project, choices; 3
}
# A logged-in maintainer: the session, the user and their memberships come on top.
LOGGED_IN = {"overview": 3, "overview.json": 3}
LOGGED_IN_PROJECT_PAGE = 3


@pytest.fixture
def scenario(upload_run) -> dict[str, str]:
    run = upload_history(upload_run)["tpu2"]
    test = Gap.objects.get(backend__name="tpu", test__key=tid(A, 2)).test_id
    return {name: url.format(test=test, run=run) for name, (url, _) in PAGES.items()}


def test_each_page_reads_a_fixed_number_of_queries(scenario, maintainer, upload_run):
    expected = {name: count for name, (_, count) in PAGES.items()}
    for day in ("as scenario", "with an older day"):
        if day == "with an older day":  # more runs, results and snapshots; no new current run
            upload_older_day(upload_run)
        counts, statements = query_counts(gets(Client(), scenario))
        assert counts == expected, f"{day}:\n" + mismatches(counts, expected, statements)

        logged_in = {
            name: count + LOGGED_IN.get(name, LOGGED_IN_PROJECT_PAGE)
            for name, count in expected.items()
        }
        counts, statements = query_counts(gets(maintainer, scenario))
        assert counts == logged_in, f"{day}, logged in:\n" + mismatches(
            counts, logged_in, statements
        )


EXEMPTIONS = {
    "exemptions": f"{P}/exemptions/",
    "filtered": f"{P}/exemptions/?backend=neuron&kind=tracked&expired=no&files=neuron&page=1",
}


def test_the_exemptions_page_reads_a_fixed_number_of_queries(scenario, exemptions, maintainer, xla):
    # Project, backend choices (twice: query_form builds the form unbound, then bound);
    # triages: count, rows, their backends, their probe outcomes; one backend's files: the
    # backend, its manifest (exemptions and their backends, which pass now, the reference's
    # files, durations, the reference, the reason exemptions its version hashes), the files its
    # current run ran; has runs. Unless ?files= names whose files: which backends are variants
    # (a family never runs: its first variant's files are listed).
    expected = {"exemptions": 18, "filtered": 17}
    for size in ("six exemptions", "two pages of them"):
        if size == "two pages of them":
            more = [
                TriageRequest(kind="tracked", match=f"test/gone_{n}.py", backends=["neuron"],
                              issue_url=f"https://github.com/pytorch/xla/issues/{n}")
                for n in range(60)
            ]  # fmt: skip
            triages_create(project=xla, requests=more)
        counts, statements = query_counts(gets(Client(), EXEMPTIONS))
        assert counts == expected, f"{size}:\n" + mismatches(counts, expected, statements)
        logged_in = {name: count + LOGGED_IN_PROJECT_PAGE for name, count in expected.items()}
        counts, statements = query_counts(gets(maintainer, EXEMPTIONS))
        assert counts == logged_in, f"{size}, logged in:\n" + mismatches(
            counts, logged_in, statements
        )


def _history_kept(xla) -> None:
    """xla keeps states from history; tpu's gap test (the scenario's test page's) is broken and
    flaky on gpu, its gap there marked so."""
    xla.history_rules = {"enabled": True}
    xla.save(update_fields=["history_rules"])
    for backend, state in (("tpu", "broken"), ("gpu", "flaky")):
        gap = Gap.objects.get(backend__name=backend, test__key=tid(A, 2), is_open=True)
        TestHistory.objects.create(
            project=xla, backend=gap.backend, test=gap.test, outcomes="PFFF",
            commits=["a", "b", "c", "d"], ats=[gap.opened_at] * 4, state=state,
            since=gap.opened_at, runs=4, failures=3, flips=1, rank=0.3,
        )  # fmt: skip
        Gap.objects.filter(pk=gap.pk).update(flaky=state == "flaky")


# A project keeping states from history reads them in one more query on the pages that show
# a test's (the file's flaky counts, the test's states, the listed gaps' states); the heatmap
# and the CSV read them with what they read already (the cells' gap counts, the gaps).
HISTORY_KEPT = {"heatmap": 0, "file": 1, "test": 1, "gaps": 1, "gaps.csv": 0}


def test_keeping_states_from_history_costs_a_query_a_page_at_most(scenario, xla):
    pages = {name: scenario[name] for name in HISTORY_KEPT}
    pages["gaps"] = f"{P}/gaps/?open=1"  # the marked gaps on its first page, whatever their age
    before, _ = query_counts(gets(Client(), pages))
    assert before == {**{n: PAGES[n][1] for n in HISTORY_KEPT}, "gaps": PAGES["gaps"][1] - 1}
    _history_kept(xla)
    expected = {name: before[name] + extra for name, extra in HISTORY_KEPT.items()}
    counts, statements = query_counts(gets(Client(), pages))
    assert counts == expected, mismatches(counts, expected, statements)
    assert any("parity_testhistory" in q for q in statements["gaps"])
