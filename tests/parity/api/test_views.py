"""The read API's access rules, query counts, schema, and the triage endpoints' validation."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from parity.models import Backend, Gap, Membership, TestCase, Triage
from parity.selectors import gaps_list, gaps_window, parity_overview
from parity.services.projects import project_create, upload_token_create
from tests.junit_builder import Case, junit_xml

A = "test/a.py::TestA::"
T1, T2, T3 = (f"{A}test_{n}" for n in range(1, 4))
URL = "/api/v1/projects/pytorch-xla"
READS = ["parity/", "gaps/", "skip-reasons/", "tests/", "triage/"]


@pytest.fixture
def gaps(upload_run):
    upload_run("cpu", {T1: "passed", T2: "passed", T3: "passed"}, day="2026-04-01")
    upload_run("tpu", {T1: ("skipped", "later"), T2: ("failed", "boom")}, day="2026-04-01")
    return {g.test.key: g for g in Gap.objects.select_related("test")}


@pytest.mark.parametrize("path", READS)
def test_reads_need_a_token_of_the_project_or_a_login(gaps, api, path):
    # A public project (the fixture's): anyone reads; tests/parity/api/test_access.py has the rest.
    assert api.get(f"{URL}/{path}").status_code == 200
    assert APIClient().get(f"{URL}/{path}").status_code == 200

    other = project_create(slug="jax", backends=["cpu"], reference="cpu")
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=other)}")
    response = stranger.get(f"{URL}/{path}")
    assert response.status_code == 403
    assert "belongs to project 'jax'" in response.json()["detail"]

    user = APIClient()
    user.force_login(get_user_model().objects.create_user("reader", password="x" * 12))
    assert user.get(f"{URL}/{path}").status_code == 200
    assert user.get(f"/api/v1/projects/no-such/{path}").status_code == 404


def test_parity_reads_two_queries_however_long_the_history(gaps, xla, django_assert_num_queries):
    with django_assert_num_queries(2):
        parity_overview(project=xla, by_dir=True)


def test_a_page_of_gaps_reads_three_queries(gaps, xla, django_assert_num_queries):
    with django_assert_num_queries(3):  # count, page, the reasons' issues
        page = list(gaps_list(project=xla)[:50])
        [g.reason.issues.all() for g in page if g.reason]
        assert gaps_list(project=xla).count() == 3


def test_gap_pages_have_count_next_and_results(gaps, api):
    body = api.get(f"{URL}/gaps/?limit=2").json()

    assert body["count"] == 3 and len(body["results"]) == 2
    assert body["next"].endswith("/gaps/?limit=2&offset=2")


@pytest.fixture
def listed(upload_run, xla) -> list[tuple[str, str, str]]:
    """Three backends' open gaps, as the list orders them: (backend, test, state)."""
    tests = [f"{A}test_{n}" for n in range(1, 8)]
    upload_run("cpu", dict.fromkeys(tests, "passed"), day="2026-04-01")
    upload_run("gpu", {t: ("skipped", "no gpu") for t in tests[:3]}, day="2026-04-01")
    upload_run("tpu", {t: ("failed", "boom") for t in tests[2:5]}, day="2026-04-01")
    upload_run("neuron", {tests[0]: "passed"}, day="2026-04-01")
    listed = [(g.backend.name, g.test.key, g.state) for g in gaps_list(project=xla)]
    assert len({b for b, _, _ in listed}) == 3 and len(listed) > 15
    return listed


def test_every_window_of_gaps_is_the_list_sliced(listed, api):
    # Each page is read from the backends it spans only (``gaps_window``): windows starting,
    # ending and wholly inside each backend's gaps, and past the end, equal the list sliced.

    def page(query: str) -> tuple[int, list]:
        body = api.get(f"{URL}/gaps/?{query}").json()
        return body["count"], [(g["backend"], g["test"], g["state"]) for g in body["results"]]

    for limit in (1, 3, 4, 7, 30):
        for offset in range(len(listed) + 2):
            window = page(f"limit={limit}&offset={offset}")
            assert window == (len(listed), listed[offset : offset + limit]), (limit, offset)
    gpu = [row for row in listed if row[0] == "gpu"]
    assert page("backend=gpu&limit=2&offset=1") == (len(gpu), gpu[1:3])


def test_a_window_sorts_the_gaps_of_the_backends_it_spans_only(listed, xla):
    # What keeps the API's first page at a big project's size off the other backends' gaps.
    by_backend = {b: [row for row in listed if row[0] == b] for b, _, _ in listed}
    ids = dict(Backend.objects.filter(project=xla).values_list("name", "pk"))
    first, second, _ = by_backend  # in the list's order
    cases = [
        (0, len(by_backend[first]), [first]),  # the first backend's gaps exactly
        (len(by_backend[first]), 1, [second]),  # the second's first
        (len(by_backend[first]) - 1, 2, [first, second]),  # across the boundary
    ]
    for offset, limit, spanned in cases:
        with CaptureQueriesContext(connection) as queries:
            count, window = gaps_window(gaps_list(project=xla), offset=offset, limit=limit)
        assert (count, [(g.backend.name, g.test.key, g.state) for g in window]) == (
            len(listed),
            listed[offset : offset + limit],
        )
        sorted_ids = next(q["sql"] for q in queries if "LIMIT" in q["sql"])
        backends = re.search(r'"parity_gap"\."backend_id" IN \(([^)]*)\)', sorted_ids)[1]
        read = {int(n) for n in backends.split(",")}
        assert read == {ids[b] for b in spanned}, (offset, limit)


def test_bad_filters_are_named(gaps, api):
    body = api.get(f"{URL}/gaps/?state=broken&since=yesterday").json()

    assert set(body) == {"state", "since"}


def test_schema_lists_the_parity_endpoints(client):
    schema = client.get("/api/schema/").content.decode()

    for path in [
        "/api/v1/projects/{slug}/parity/",
        "/api/v1/projects/{slug}/gaps/",
        "/api/v1/projects/{slug}/skip-reasons/",
        "/api/v1/projects/{slug}/skip-reasons/{id}/trend/",
        "/api/v1/projects/{slug}/tests/",
        "/api/v1/projects/{slug}/tests/{id}/",
        "/api/v1/projects/{slug}/triage/",
        "/api/v1/runs/{id}/verdict/",
    ]:
        assert path in schema, path


def test_parity_without_files_has_the_same_backends_and_no_file(gaps, api):
    whole = api.get(f"{URL}/parity/").json()
    lean = api.get(f"{URL}/parity/?files=0").json()

    assert whole["files"] and lean["files"] == []
    assert lean["backends"] == whole["backends"]


def _tpu(api) -> dict:
    return api.get(f"{URL}/parity/").json()["backends"][3]


def test_triage_a_gap_then_remove_it(gaps, api):
    assert (_tpu(api)["tracked"], _tpu(api)["untracked"]) == (0, 3)
    body = {
        "kind": "tracked",
        "gap": gaps[T2].pk,
        "issue_url": "https://github.com/pytorch/xla/issues/42",
    }

    created = api.post(f"{URL}/triage/", body, format="json")

    assert created.status_code == 201, created.content
    triage = created.json()
    assert (triage["backends"], triage["test"], triage["kind"], triage["stale"]) == (
        ["tpu"],
        T2,
        "tracked",
        False,
    )
    assert triage["issue"] == "https://github.com/pytorch/xla/issues/42"
    assert (_tpu(api)["tracked"], _tpu(api)["untracked"]) == (1, 2)
    assert api.get(f"{URL}/gaps/?tracked=true").json()["results"][0]["issues"] == [
        "https://github.com/pytorch/xla/issues/42"
    ]

    assert api.delete(f"{URL}/triage/{triage['id']}/").status_code == 204
    assert (_tpu(api)["tracked"], _tpu(api)["untracked"]) == (0, 3)
    assert not Triage.objects.exists()


def test_a_logged_in_maintainer_is_recorded_on_the_triage(gaps, xla):
    user = get_user_model().objects.create_user("maintainer", password="x" * 12)
    Membership.objects.create(user=user, project=xla, role="maintainer")
    client = APIClient()
    client.force_login(user)
    body = {"kind": "intended", "test": gaps[T1].test_id, "backend": "tpu", "note": "by design"}

    response = client.post(f"{URL}/triage/", body, format="json")

    assert response.status_code == 201, response.content
    assert response.json()["created_by"] == "maintainer"
    assert (_tpu(client)["intended"], _tpu(client)["untracked"]) == (1, 2)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"kind": "tracked", "test": "T1"}, "A tracked triage needs an 'issue_url'."),
        ({"kind": "intended", "test": "T1"}, "An intended triage needs a short 'note' saying why."),
        ({"kind": "intended", "note": "x"}, "Name exactly one of 'gap', 'test', 'reason'"),
        ({"kind": "intended", "note": "x", "test": "T1", "reason": 1}, "Name exactly one"),
        ({"kind": "intended", "note": "x", "test": "T1", "backend": "ipu"}, "Unknown backend"),
        ({"kind": "intended", "note": "x", "gap": 999999}, "No gap 999999"),
        ({"kind": "intended", "note": "x", "reason": 999999}, "No reason 999999"),
    ],
)
def test_triage_requests_are_checked(gaps, api, body, message):
    if body.get("test") == "T1":
        body["test"] = gaps[T1].test_id

    response = api.post(f"{URL}/triage/", body, format="json")

    assert response.status_code == 400
    assert response.json()["detail"].startswith(message)
    assert not Triage.objects.exists()


def test_a_token_cannot_delete_another_projects_triage(gaps, api):
    triage = api.post(
        f"{URL}/triage/", {"kind": "intended", "gap": gaps[T1].pk, "note": "x"}, format="json"
    ).json()
    other = project_create(slug="jax", backends=["cpu"], reference="cpu")
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=other)}")

    assert stranger.delete(f"/api/v1/projects/jax/triage/{triage['id']}/").status_code == 404
    assert Triage.objects.count() == 1


def test_gaps_citing_only_closed_issues_are_counted_and_listed_apart(
    upload_run, api, fake_tracker, settings
):
    from parity.services.issue_sync import issues_sync
    from tests.fake_tracker import github_issue

    settings.PARITY_TRACKER_SYNC_SECONDS = settings.PARITY_TRACKER_SYNC_TICK_SECONDS
    fake_tracker.add_github("pytorch/xla", github_issue(11, "No complex64", state="closed"))
    fake_tracker.add_github("pytorch/xla", github_issue(12, "Lower nonzero"))
    upload_run("cpu", {T1: "passed", T2: "passed", T3: "passed"}, day="2026-04-01")
    skips = {
        T1: ("skipped", "see https://github.com/pytorch/xla/issues/11"),
        T2: ("skipped", "see #12"),  # a bare number, through the project's issue URL template
        T3: ("failed", "boom"),
    }
    upload_run("tpu", skips, day="2026-04-01")

    issues_sync()

    gaps = {g["test"]: g for g in api.get(f"{URL}/gaps/").json()["results"]}
    assert {t: (g["tracked"], g["tracked_closed"]) for t, g in gaps.items()} == {
        T1: (True, True),
        T2: (True, False),
        T3: (False, False),
    }
    assert gaps[T1]["issues"] == ["https://github.com/pytorch/xla/issues/11"]
    assert gaps[T1]["issue_details"] == [
        {
            "key": "pytorch/xla#11",
            "url": "https://github.com/pytorch/xla/issues/11",
            "title": "No complex64",
            "state": "closed",
        }
    ]
    assert gaps[T2]["issue_details"][0]["title"] == "Lower nonzero"
    closed_only = api.get(f"{URL}/gaps/?tracked_closed=true").json()["results"]
    assert [g["test"] for g in closed_only] == [T1]
    tpu = next(b for b in api.get(f"{URL}/parity/").json()["backends"] if b["backend"] == "tpu")
    assert (tpu["tracked"], tpu["tracked_closed"], tpu["untracked"]) == (2, 1, 1)
    reasons = {r["reason"]: r for r in api.get(f"{URL}/skip-reasons/").json()["results"]}
    details = reasons["see https://github.com/pytorch/xla/issues/11"]["issue_details"]
    assert [(i["title"], i["state"]) for i in details] == [("No complex64", "closed")]
    # Its category by the project's (default) skip rules: a link to an issue is a known bug.
    reason = reasons["see https://github.com/pytorch/xla/issues/11"]
    assert (reason["category"], reason["disposition"]) == ("known bug", "needs_work")


def test_an_exemption_says_its_issues_state(gaps, api, fake_tracker):
    from parity.services.issue_sync import issues_sync
    from tests.fake_tracker import github_issue

    fake_tracker.add_github("pytorch/xla", github_issue(5, "Flaky on TPU", state="closed"))
    body = {
        "kind": "tracked",
        "match": "test/a.py",
        "issue_url": "https://github.com/pytorch/xla/issues/5",
    }
    assert api.post(f"{URL}/triage/", body).status_code == 201

    issues_sync()

    (listed,) = api.get(f"{URL}/triage/").json()["results"]
    assert (listed["issue_title"], listed["issue_state"]) == ("Flaky on TPU", "closed")


def test_a_rerun_that_disagreed_shows_as_flaky_in_the_tests_history(xla, ingest, client):
    report = junit_xml(
        Case("TestA", "test_1", "failed", "boom", file="test/a.py"),
        Case("TestA", "test_1", "passed", file="test/a.py"),  # the rerun passed
        Case("TestA", "test_2", "passed", file="test/a.py"),
    )
    response = ingest(("junit.xml", report), backend="tpu", commit="c" * 40, branch="master")
    assert response.status_code in (200, 202), response.content
    tests = {t.name: t.pk for t in TestCase.objects.all()}

    history = {
        name: client.get(f"{URL}/tests/{pk}/").json()["backends"]["tpu"]["history"]
        for name, pk in tests.items()
    }

    assert [(h["outcome"], h["flaky"]) for h in history["test_1"]] == [("passed", True)]
    assert [(h["outcome"], h["flaky"]) for h in history["test_2"]] == [("passed", False)]
    page = client.get(f"/p/pytorch-xla/tests/{tests['test_1']}/").content.decode()
    assert "flaky: its reruns disagreed" in page


def test_the_apis_score_is_the_pages_headline_and_the_raw_one_beside_it(upload_run, xla, api):
    """tpu passes T3, fails T2 and skips T1, an intended gap (by design): the API's ``score``
    leaves T1 out as every page does (1 of 2), ``score_raw`` counts it (1 of 3). CI's summary
    prints ``score``, so a pull request and the dashboard say one number."""
    from parity.pure.scores import Counts, scores
    from parity.services.triage import TriageRequest, triage_create

    upload_run("cpu", {T1: "passed", T2: "passed", T3: "passed"}, day="2026-04-01")
    intended = TriageRequest(kind="intended", match=T1, backend="tpu", note="no such op on tpu")
    triage_create(project=xla, request=intended)
    tpu_outcomes = {T1: ("skipped", "no op"), T2: ("failed", "boom"), T3: "passed"}
    upload_run("tpu", tpu_outcomes, day="2026-04-01")

    rows = api.get(f"{URL}/parity/").json()["backends"]
    tpu = next(b for b in rows if b["backend"] == "tpu")

    assert (tpu["passing"], tpu["reference_passing"], tpu["intended"]) == (1, 3, 1)
    assert (tpu["score"], tpu["score_raw"]) == (0.5, 0.3333)
    assert tpu["score"] == scores(Counts(passing=1, compared=3, intended=1)).headline
