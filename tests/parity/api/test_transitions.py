"""The transitions API: the list, newest first, and one transition whose lists are the tests
the uploads say moved each way (``transitions_scenario``), paged by limit and offset, with its
lapses; refusals as the read API's; both documented in the schema."""

import pytest
from rest_framework.test import APIClient

from parity.models import Transition
from parity.services.projects import project_create, upload_token_create
from tests.parity.transitions_scenario import expected, history, upgrade_upload

URL = "/api/v1/projects/pytorch-xla/transitions/"


@pytest.fixture
def upgraded(xla, ingest, eager_errors_propagate):
    runs = history()
    return runs, upgrade_upload(xla, ingest, runs), Transition.objects.get()


def test_the_list_and_the_detail_say_what_moved(upgraded, api):
    runs, uploaded, transition = upgraded
    truth = expected(runs["day2"], runs["day3"])
    listed = api.get(URL).json()
    assert listed["count"] == 1
    row = listed["results"][0]
    assert row["id"] == transition.pk and row["backend"] == "rocm-gfx942"
    assert (row["from_run"], row["to_run"]) == (uploaded["day2"].pk, uploaded["day3"].pk)
    assert row["changed"] == {"rocm": ["7.1", "7.14"]}
    assert row["counts"] == {kind: len(tests) for kind, tests in truth.items()}
    assert row["url"].endswith(f"/p/pytorch-xla/transitions/{transition.pk}/")
    assert [(x["condition"], x["before"], x["after"]) for x in row["lapses"]] == [
        ("rocm < 7.14", True, False),
        ("rocm >= 7.14", False, True),
    ]

    detail = api.get(f"{URL}{transition.pk}/?limit=1000").json()
    assert detail["expired"] is False
    assert {lst["kind"]: {t["test"] for t in lst["tests"]} for lst in detail["lists"]} == truth
    assert {lst["kind"]: lst["total"] for lst in detail["lists"]} == row["counts"]


def test_one_kind_pages_by_limit_and_offset(upgraded, api):
    runs, _, transition = upgraded
    gone = sorted(expected(runs["day2"], runs["day3"])["gone"])
    seen = []
    for offset in range(0, len(gone), 2):
        body = api.get(f"{URL}{transition.pk}/?kind=gone&limit=2&offset={offset}").json()
        assert [lst["kind"] for lst in body["lists"]] == ["gone"]
        seen += [t["test"] for t in body["lists"][0]["tests"]]
    assert seen == gone


def test_bad_queries_and_strangers_are_refused(upgraded, api):
    _, _, transition = upgraded
    for query in ("kind=sideways", "limit=-1", "limit=5000", "offset=x", "offset=" + "9" * 30):
        response = api.get(f"{URL}{transition.pk}/?{query}")
        assert response.status_code == 400, query
    assert api.get(f"{URL}999999/").status_code == 404
    other = project_create(slug="jax", backends=["cpu"], reference="cpu")
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=other)}")
    assert stranger.get(URL).status_code == 403
    assert stranger.get(f"{URL}{transition.pk}/").status_code == 403


def test_the_schema_documents_both(client):
    schema = client.get("/api/schema/").content.decode()
    assert "/api/v1/projects/{slug}/transitions/" in schema
    assert "/api/v1/projects/{slug}/transitions/{id}/" in schema
