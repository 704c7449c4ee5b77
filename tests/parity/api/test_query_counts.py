"""Every read endpoint of the parity API answers in a fixed number of queries, whatever the
length of the history (the same counts with a third, older day of runs); triage writes stay
within a bound that does not grow with the project. Each count is the whole request's:
authentication (the token), the project, the endpoint's one selector."""

import pytest
from rest_framework.test import APIClient

from parity.definitions import untracked_q
from parity.models import Gap, Reason, Run, TestHistory, Triage
from tests.parity.dashboard_scenario import (
    CUDA,
    A,
    tid,
    upload_history,
    upload_older_day,
)
from tests.query_counts import gets, mismatches, query_counts

URL = "/api/v1/projects/pytorch-xla"

# With an upload token, its lookup comes first (its last use, written by the scenario's uploads
# under a minute ago, is not written again).
READS = {
    "parity": (f"{URL}/parity/", 4),  # token, project; backends, file cells
    "parity by folder": (f"{URL}/parity/?dir=true", 4),
    "parity, no files": (f"{URL}/parity/?files=0", 3),  # token, project; backends
    # token, project; counts per backend, their order, the page's ids, its rows, reasons'
    # issues, their files' owners, where else their tests fail (no variants here: one)
    "gaps": (f"{URL}/gaps/", 10),  # one more: does any test have a suite (suite_gaps)
    "closed gaps": (f"{URL}/gaps/?closed_since=2000-01-01", 9),
    # token, project; backends, file cells; names, pairs, 2 SETs, rows, triage, numbers, cells
    "parity aligned": (f"{URL}/parity/?aligned=1", 12),
    # token, project; names, pairs, 2 SETs, rows, triage, gaps
    "gaps aligned": (f"{URL}/gaps/?aligned=1", 9),
    "skip reasons": (f"{URL}/skip-reasons/", 8),  # token, project; 6
    "reason trend": (f"{URL}/skip-reasons/{{reason}}/trend/", 5),  # + the reason; 2
    "tests": (f"{URL}/tests/?q=test_a", 4),  # token, project; count, page
    "test": (f"{URL}/tests/{{test}}/", 8),  # token, project, test; 4; its compare views
    "triages": (f"{URL}/triage/", 3),  # token, project; page (no count: unpaginated)
    # token, project; backends, the suite map, its rows, the suites' runs, their timeouts
    "suites": (f"{URL}/suites/", 6),
    # token, run; baseline, conditioned triages, its plan, 1 statement, run files, failed
    # uploads (run health); the suites its uploads name (none: no tiers to read); removals
    # since the baseline, triages expired since (none: no uncovered gaps to read)
    "verdict": ("/api/v1/runs/{run}/verdict/", 11),
}
ANONYMOUS = -1  # no token to look up


@pytest.fixture
def scenario(upload_run) -> dict[str, str]:
    upload_history(upload_run)
    ids = {
        "test": Gap.objects.get(backend__name="tpu", test__key=tid(A, 2)).test_id,
        "reason": Reason.objects.get(text=CUDA).pk,
        "run": Run.objects.filter(backend__name="tpu").latest("started_at").pk,
    }
    return {name: url.format(**ids) for name, (url, _) in READS.items()}


def test_each_read_endpoint_answers_in_a_fixed_number_of_queries(scenario, api, upload_run):
    expected = {name: count for name, (_, count) in READS.items()}
    for day in ("as scenario", "with an older day"):
        if day == "with an older day":  # more runs, results and snapshots; no new current run
            upload_older_day(upload_run)
        counts, statements = query_counts(gets(api, scenario))
        assert counts == expected, f"{day}:\n" + mismatches(counts, expected, statements)

        anonymous = {name: count + ANONYMOUS for name, count in expected.items()}
        counts, statements = query_counts(gets(APIClient(), scenario))
        assert counts == anonymous, f"{day}, anonymous:\n" + mismatches(
            counts, anonymous, statements
        )


def test_the_schema_reads_nothing(db, client, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert client.get("/api/schema/").status_code == 200


# Triage writes recount the backend's numbers at once (the engine's work, not a per-gap loop):
# set-based statements, not a loop over gaps, so a fixed bound holds.
TRIAGE_WRITE_QUERIES = 30


def test_triage_writes_stay_within_a_bound(scenario, api, django_assert_max_num_queries):
    gap = Gap.objects.get(backend__name="gpu", test__key=tid(A, 2), is_open=True)
    body = {
        "kind": "tracked",
        "gap": gap.pk,
        "issue_url": "https://github.com/pytorch/xla/issues/9",
    }
    with django_assert_max_num_queries(TRIAGE_WRITE_QUERIES):
        created = api.post(f"{URL}/triage/", body, format="json")
    assert created.status_code == 201, created.content
    with django_assert_max_num_queries(TRIAGE_WRITE_QUERIES):
        deleted = api.delete(f"{URL}/triage/{created.json()['id']}/")
    assert deleted.status_code == 204 and not Triage.objects.exists()


# A project keeping states from history: the file cells' flaky counts and a test's states
# take one more query; the gaps list reads its gaps' states with them.
HISTORY_KEPT = {"parity": 1, "gaps": 0, "test": 1}


def test_keeping_states_from_history_costs_a_query_an_endpoint_at_most(scenario, api, xla):
    reads = {name: scenario[name] for name in HISTORY_KEPT}
    xla.history_rules = {"enabled": True}
    xla.save(update_fields=["history_rules"])
    # An untracked gap: flaky, it reads flaky (a tracked one would read tracked).
    gap = Gap.objects.filter(untracked_q(), backend__name="tpu", is_open=True).first()
    TestHistory.objects.create(
        project=xla, backend=gap.backend, test=gap.test, outcomes="FPFP", commits=list("abcd"),
        ats=[gap.opened_at] * 4, state="flaky", since=gap.opened_at, runs=4, failures=2,
        flips=3, rank=0.2,
    )  # fmt: skip
    Gap.objects.filter(pk=gap.pk).update(flaky=True)
    expected = {name: READS[name][1] + extra for name, extra in HISTORY_KEPT.items()}
    counts, statements = query_counts(gets(api, reads))
    assert counts == expected, mismatches(counts, expected, statements)
    gaps = api.get(reads["gaps"]).json()["results"]
    assert {g["history"] for g in gaps if g["id"] == gap.pk} == {"flaky"}
    files = api.get(reads["parity"]).json()["files"]
    assert sum(f["cells"]["tpu"]["flaky"] for f in files) == 1
