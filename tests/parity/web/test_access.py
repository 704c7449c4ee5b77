"""Who may read and triage a project (``parity.web.access``): the same answers from the API, the
dashboard's pages and JSON endpoints, the digest preview and the overview."""

from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from parity.models import Gap, Membership, Project, Role, Triage
from parity.services.projects import project_create, upload_token_create
from parity.web.access import Principal, project_access
from tests.parity.dashboard_scenario import DAY2

A = "test/a.py::TestA::"
T1, T2 = f"{A}test_1", f"{A}test_2"
P = "/p/pytorch-xla"
API = "/api/v1/projects/pytorch-xla"
PAGES = ["/", "/file/?path=test/a.py&backend=tpu", "/gaps/", "/skip-reasons/", "/runs/", "/digest/"]
GAPS = f"{P}/gaps/?open=1"


@pytest.fixture
def gaps(upload_run) -> dict[str, Gap]:
    upload_run("cpu", {T1: "passed", T2: "passed"}, day=DAY2)
    upload_run("tpu", {T1: ("skipped", "later"), T2: "passed"}, day=DAY2)
    return {g.test.key: g for g in Gap.objects.select_related("test")}


@pytest.fixture
def private(gaps, xla) -> Project:
    Project.objects.filter(pk=xla.pk).update(visibility="private")
    xla.refresh_from_db()
    return xla


def login(username: str, *, project: Project | None = None, role: str = "", **flags) -> Client:
    """A client logged in as a new user, with ``role`` in ``project`` if given."""
    user = get_user_model().objects.create_user(username, password="x" * 12, **flags)
    if role:
        Membership.objects.create(user=user, project=project, role=role)
    client = APIClient()
    client.force_login(user)
    return client


def triage_body(gap: Gap) -> dict:
    return {"kind": "intended", "gap": gap.pk, "note": "by design"}


# --- The rule ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_rule_for_each_kind_of_principal():
    public = project_create(slug="pub", backends=["cpu"], reference="cpu", visibility="public")
    private = project_create(slug="priv", backends=["cpu"], reference="cpu")
    users = get_user_model().objects
    viewer, maintainer = users.create_user("viewer"), users.create_user("maintainer")
    Membership.objects.create(user=viewer, project=private, role=Role.VIEWER)
    Membership.objects.create(user=maintainer, project=private, role=Role.MAINTAINER)
    token = private.upload_tokens.create(digest="d", prefix="p")
    principals = {
        "anonymous": Principal(),
        "stranger": Principal(user=users.create_user("stranger")),
        "viewer": Principal(user=viewer),
        "maintainer": Principal(user=maintainer),
        "superuser": Principal(user=users.create_superuser("root")),
        "token of priv": Principal(token=token),
    }

    table = {
        name: tuple(project_access(principal=p, project=project) for project in (public, private))
        for name, p in principals.items()
    }

    assert table == {  # ((read, triage) on pub, (read, triage) on priv)
        "anonymous": ((True, False), (False, False)),
        "stranger": ((True, False), (False, False)),
        "viewer": ((True, False), (True, False)),
        "maintainer": ((True, False), (True, True)),
        "superuser": ((True, True), (True, True)),
        "token of priv": ((False, False), (True, True)),
    }


@pytest.mark.django_db
def test_new_projects_are_private_unless_the_setting_says_otherwise(settings):
    assert project_create(slug="a", backends=["cpu"], reference="cpu").visibility == "private"
    settings.PARITY_DEFAULT_VISIBILITY = "public"
    assert project_create(slug="b", backends=["cpu"], reference="cpu").visibility == "public"


# --- Pages -------------------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES)
def test_anonymous_visitors_of_a_private_project_are_sent_to_the_login_page(private, page):
    response = Client().get(f"{P}{page}")
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={quote(P + page, safe='/')}"


@pytest.mark.parametrize("page", PAGES)
def test_private_pages_are_not_found_for_strangers_and_shown_to_members(private, page):
    stranger = login("stranger")
    viewer = login("viewer", project=private, role="viewer")
    superuser = login("root", is_superuser=True)
    for url in (f"{P}{page}", f"{P}/tests/{private.tests.get(key=T1).pk}/"):
        assert stranger.get(url).status_code == 404
        assert viewer.get(url).status_code == 200
        assert superuser.get(url).status_code == 200


def test_an_unknown_project_looks_like_a_private_one(gaps):
    assert Client().get("/p/nope/gaps/").status_code == 302  # not 404: existence stays hidden
    assert login("stranger").get("/p/nope/gaps/").status_code == 404


def test_a_public_project_is_readable_by_anyone(gaps):
    for page in PAGES:
        assert Client().get(f"{P}{page}").status_code == 200, page
    assert Client().get(f"{P}/skip-reasons.json").status_code == 200


def test_chart_data_of_a_private_project_answers_like_the_api(private):
    url = f"{P}/skip-reasons.json"
    anonymous = Client().get(url)
    assert (anonymous.status_code, anonymous["WWW-Authenticate"]) == (401, "Token")
    assert login("stranger").get(url).json() == {"detail": "No project 'pytorch-xla'."}
    member = login("viewer", project=private, role="viewer").get(url)
    assert member.status_code == 200 and "series" in member.json()
    assert "private" in member["Cache-Control"]  # no shared cache may keep it


def test_the_overview_lists_only_readable_projects(private):
    project_create(slug="jax", backends=["cpu"], reference="cpu", visibility="public")

    def listed(client: Client) -> tuple[bool, bool]:
        html = client.get("/").content.decode()
        return 'href="/p/pytorch-xla/"' in html, 'href="/p/jax/"' in html

    def charted(client: Client) -> list[str]:
        return sorted(client.get("/overview.json").json()["projects"])

    anonymous, viewer = Client(), login("viewer", project=private, role="viewer")
    assert listed(anonymous) == (False, True)
    assert listed(viewer) == (True, True)
    assert charted(anonymous) == []  # jax has no snapshots; pytorch-xla is hidden
    assert charted(viewer) == ["pytorch-xla"]
    # The ETag depends on who asks: the viewer's copy is no anonymous 304.
    etag = viewer.get("/overview.json")["ETag"]
    assert anonymous.get("/overview.json", HTTP_IF_NONE_MATCH=etag).status_code == 200
    assert viewer.get("/overview.json", HTTP_IF_NONE_MATCH=etag).status_code == 304


# --- Triage ------------------------------------------------------------------------------------


def test_only_maintainers_triage_on_the_dashboard(gaps, xla):
    body = {**triage_body(gaps[T1]), "scope": "gap", "next": f"{P}/gaps/"}
    viewer = login("viewer", project=xla, role="viewer")
    stranger = login("stranger")

    assert "Exempt…</summary>" not in viewer.get(GAPS).content.decode()
    assert "Only the project's maintainers triage gaps." in viewer.get(GAPS).content.decode()
    refused = stranger.post(f"{P}/triage/", body)
    assert refused.status_code == 403
    assert "Only maintainers of &#x27;pytorch-xla&#x27; may triage it." in refused.content.decode()
    assert viewer.post(f"{P}/triage/", body).status_code == 403
    assert not Triage.objects.exists()

    maintainer = login("maintainer", project=xla, role="maintainer")
    assert "Exempt…</summary>" in maintainer.get(GAPS).content.decode()
    assert maintainer.post(f"{P}/triage/", body).status_code == 302
    assert Triage.objects.get().created_by.username == "maintainer"


def test_triage_on_a_private_project_is_not_found_for_strangers(private, gaps):
    body = {**triage_body(gaps[T1]), "scope": "gap"}
    assert login("stranger").post(f"{P}/triage/", body).status_code == 404
    assert Client().post(f"{P}/triage/", body)["Location"].startswith("/accounts/login/")
    assert not Triage.objects.exists()


def test_only_maintainers_triage_through_the_api(gaps, xla, api):
    body = triage_body(gaps[T1])
    for client in (login("stranger"), login("viewer", project=xla, role="viewer")):
        response = client.post(f"{API}/triage/", body, format="json")
        assert response.status_code == 403
        assert response.json()["detail"] == "Only maintainers of 'pytorch-xla' may triage it."
    assert APIClient().post(f"{API}/triage/", body, format="json").status_code == 401
    assert not Triage.objects.exists()

    created = login("maintainer", project=xla, role="maintainer").post(
        f"{API}/triage/", body, format="json"
    )
    assert created.status_code == 201
    triage = created.json()["id"]
    viewer = login("viewer2", project=xla, role="viewer")
    assert viewer.delete(f"{API}/triage/{triage}/").status_code == 403
    assert api.delete(f"{API}/triage/{triage}/").status_code == 204  # the project's token


# --- The API -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["parity/", "gaps/", "skip-reasons/", "tests/", "triage/"])
def test_api_reads_follow_the_same_rule(private, api, path):
    url = f"{API}/{path}"
    assert api.get(url).status_code == 200
    assert APIClient().get(url).status_code == 401
    assert APIClient().get(f"/api/v1/projects/nope/{path}").status_code == 401  # same as private

    stranger = APIClient()
    other = project_create(slug="jax", backends=["cpu"], reference="cpu")
    stranger.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=other)}")
    assert stranger.get(url).json() == {"detail": "No project 'pytorch-xla'."}  # 404
    assert login("stranger").get(url).status_code == 404
    assert login("viewer", project=private, role="viewer").get(url).status_code == 200

    Project.objects.filter(pk=private.pk).update(visibility="public")
    assert APIClient().get(url).status_code == 200
    refused = stranger.get(url)  # a token reads only its own project, public or not
    assert (refused.status_code, refused.json()["detail"]) == (
        403,
        "This token belongs to project 'jax', not 'pytorch-xla'.",
    )


def test_a_verdict_of_a_private_run_hides_its_project(private, api):
    run = private.runs.order_by("pk").last().pk
    url = f"/api/v1/runs/{run}/verdict/"
    assert api.get(url).status_code == 200
    assert APIClient().get(url).status_code == 401
    assert APIClient().get("/api/v1/runs/999999/verdict/").status_code == 401
    hidden = login("stranger").get(url)
    assert (hidden.status_code, hidden.json()) == (404, {"detail": f"No run {run}."})
    assert login("viewer", project=private, role="viewer").get(url).status_code == 200


# --- Downloads with a token ------------------------------------------------------------------


def test_a_download_with_a_token_is_the_file_or_a_refusal_never_the_login_page(private):
    from parity.services.projects import user_token_create

    viewer = get_user_model().objects.create_user("csv-bot")
    Membership.objects.create(user=viewer, project=private, role=Role.VIEWER)
    stranger = get_user_model().objects.create_user("csv-stranger")
    keys = {
        "project": upload_token_create(project=private),
        "viewer": user_token_create(user=viewer),
        "stranger": user_token_create(user=stranger),
    }
    client = Client()

    def get(url: str, header: str = ""):
        return client.get(url, HTTP_AUTHORIZATION=header) if header else client.get(url)

    for url in (f"{P}/matrix.csv", f"{P}/gaps.csv"):
        for scheme in ("Token", "Bearer"):
            for who in ("project", "viewer"):
                got = get(url, f"{scheme} {keys[who]}")
                assert (got.status_code, got["Content-Type"]) == (200, "text/csv; charset=utf-8")
                assert got.content.decode().startswith(("backend_a,", "backend,test,")), url
        wrong = get(url, "Token not-a-key")
        assert (wrong.status_code, wrong["Content-Type"]) == (401, "text/plain; charset=utf-8")
        assert "Invalid or revoked token" in wrong.content.decode()
        assert wrong["WWW-Authenticate"] == "Token"
        hidden = get(url, f"Token {keys['stranger']}")
        assert (hidden.status_code, hidden.content.decode()) == (404, "No project 'pytorch-xla'.\n")
        assert get(url).status_code == 302  # a browser without a session: the login page
