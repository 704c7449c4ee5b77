"""One URL rule for every writer of an issue URL (``parity.pure.web_urls``): a ``javascript:``,
``data:`` or ``vbscript:`` URL, in any case, behind a control character or with one inside, an
``ftp://`` or a host-less URL is refused by every list format's import (the entry reported as
not imported, the rest of the list imported), by the API, the admin, a project's issue URL
template, a CI run's URL, and, as a last wall, by the database itself."""

import csv
import importlib
import io
import json

import pytest
from django.apps import apps as django_apps
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from rest_framework.test import APIClient

from parity.models import Membership, Run, TrackingIssue, Triage
from parity.pure.list_formats.parity_file import exemptions_parse
from parity.pure.web_urls import PROBLEM
from parity.services.list_imports import NOT_IMPORTED, ListFile, list_file_import
from parity.services.triage import (
    TriageRejected,
    exemptions_import,
    tracking_issue_get_or_create,
)

GOOD = "https://github.com/pytorch/xla/issues/7"
# Refused wherever an issue URL is a cell of its own.
BAD = [
    "javascript:alert(document.domain)//://x",
    "JaVaScRiPt:alert(document.domain)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "\x01javascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "ftp://files.example/issue/1",
    "https://",
]
# Where a format finds its issue as the first http(s) word of a comment, only these can reach
# the rule (a ``javascript:`` word is no issue there at all: see the test below).
BAD_IN_COMMENTS = ["http://", "https://\x01javascript:alert(1)", "https:///no-host"]


def amd_csv(bad: str) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["test_file", "test_class", "test_name", "skip_reason", "issue"])
    writer.writerow(["test/test_a.py", "TestA", "test_bad", "broken", bad])
    writer.writerow(["test/test_a.py", "TestA", "test_good", "broken", GOOD])
    return out.getvalue()


def disabled_json(bad: str) -> str:
    return json.dumps(
        {"test_bad (__main__.TestA)": ["1", bad, []], "test_good (__main__.TestA)": ["7", GOOD, []]}
    )


def deselect(bad: str) -> str:
    bad_line = f"test/test_a.py::TestA::test_bad  # broken {bad}"
    return f"{bad_line}\ntest/test_a.py::TestA::test_good  # {GOOD}\n"


def skip_dict(bad: str) -> str:
    return (
        "skip_dict = {\n"
        '    "test_a.py": (\n'
        f'        "test_bad",  # broken {bad}\n'
        f'        "test_good",  # {GOOD}\n'
        "    ),\n"
        "}\n"
    )


# Every format with an issue in it (set-test-configs has none), with the file that carries a
# bad issue URL on one entry and a good one on the other.
FORMATS = [
    *(("amd-csv", amd_csv, bad) for bad in BAD),
    *(("disabled-json", disabled_json, bad) for bad in BAD),
    *(("deselect", deselect, bad) for bad in BAD_IN_COMMENTS),
    *(("na-list", deselect, bad) for bad in BAD_IN_COMMENTS),
    *(("skip-dict", skip_dict, bad) for bad in BAD_IN_COMMENTS),
]


def stored_urls() -> set[str]:
    return set(TrackingIssue.objects.values_list("url", flat=True))


@pytest.mark.parametrize(("format", "build", "bad"), FORMATS)
def test_every_list_format_reports_a_bad_issue_url_and_imports_the_rest(
    project, format, build, bad
):
    report = list_file_import(
        project=project, file=ListFile(format=format, text=build(bad), name="list.txt")
    )

    refused = [line for line in report.lines if line.action == NOT_IMPORTED]
    assert len(refused) == 1, report.lines
    assert PROBLEM in refused[0].why and "test_bad" in refused[0].match
    assert report.count("created") == 1
    (triage,) = Triage.objects.select_related("issue")
    assert "test_good" in triage.match
    assert stored_urls() <= {GOOD}


@pytest.mark.parametrize("format", ["deselect", "na-list", "skip-dict"])
def test_a_script_url_in_a_comment_is_no_issue(project, format):
    build = skip_dict if format == "skip-dict" else deselect
    report = list_file_import(
        project=project,
        file=ListFile(format=format, text=build("javascript:alert(1)"), name="list.txt"),
    )

    assert report.count("created") == 2
    assert stored_urls() == {GOOD}


@pytest.mark.parametrize("bad", BAD)
def test_parity_yaml_refuses_the_list_and_stores_nothing(project, bad):
    entries = exemptions_parse(
        [{"match": "test/test_a.py", "kind": "tracked", "issue": bad, "backends": ["tpu"]}]
    )

    with pytest.raises(TriageRejected, match=r"Entry 1: The issue URL must be http\(s\)"):
        exemptions_import(project=project, entries=entries)
    assert not Triage.objects.exists() and not TrackingIssue.objects.exists()


@pytest.fixture
def maintainer(project) -> APIClient:
    user = get_user_model().objects.create_user("maintainer", password="x" * 12)
    Membership.objects.create(user=user, project=project, role="maintainer")
    client = APIClient()
    client.force_login(user)
    return client


@pytest.mark.parametrize("bad", BAD)
def test_the_triage_api_refuses_a_bad_issue_url(maintainer, bad):
    body = {"kind": "tracked", "match": "test/test_a.py", "issue_url": bad}

    response = maintainer.post("/api/v1/projects/pytorch-xla/triage/", body, format="json")

    assert response.status_code == 400, response.content
    assert "issue_url" in response.json() or "issue" in str(response.json())
    assert not Triage.objects.exists() and not TrackingIssue.objects.exists()


def test_the_list_import_api_with_the_upload_token_reports_a_bad_issue_url(api):
    body = {"format": "amd-csv", "content": amd_csv("javascript:alert(document.domain)//://x")}

    response = api.post("/api/v1/projects/pytorch-xla/exemptions/import/", body, format="json")

    assert response.status_code == 200, response.content
    report = response.json()
    assert (report["created"], report["not_imported"]) == (1, 1)
    (line,) = [u for u in report["unmatched"] if u["action"] == NOT_IMPORTED]
    assert line["where"] == "line 2" and PROBLEM in line["why"]
    assert stored_urls() == {GOOD}
    export = api.get("/api/v1/projects/pytorch-xla/exemptions/export/amd-csv/")
    assert "javascript" not in export.content.decode()


@pytest.mark.parametrize("bad", BAD)
def test_a_service_that_links_an_issue_refuses_a_bad_url(project, bad):
    """Filing on a tracker, a triage and an import all link their issue through this."""
    with pytest.raises(TriageRejected, match=r"issue URL must be http\(s\)"):
        tracking_issue_get_or_create(project=project, url=bad)
    assert not TrackingIssue.objects.exists()


def test_a_bad_url_whose_key_the_project_has_does_not_reach_the_stored_issue(project):
    issue = tracking_issue_get_or_create(project=project, url="https://github.com/o/r/issues/1")

    with pytest.raises(TriageRejected):
        tracking_issue_get_or_create(project=project, url="javascript:x//github.com/o/r/issues/1")
    issue.refresh_from_db()
    assert issue.url == "https://github.com/o/r/issues/1"


@pytest.mark.parametrize("bad", ["javascript:alert(1)", "ftp://x.example/1", "https://a b"])
def test_the_database_refuses_a_bad_issue_url_from_any_writer(project, bad):
    with pytest.raises(IntegrityError), transaction.atomic():
        TrackingIssue.objects.bulk_create([TrackingIssue(project=project, key="k", url=bad)])
    issue = TrackingIssue.objects.create(project=project, key="k", url=GOOD)
    with pytest.raises(IntegrityError), transaction.atomic():
        TrackingIssue.objects.filter(pk=issue.pk).update(url=bad)


@pytest.fixture
def admin_client_(client, db):
    get_user_model().objects.create_superuser("root", password="x" * 12)
    client.login(username="root", password="x" * 12)
    return client


@pytest.mark.parametrize("bad", BAD)
def test_the_admin_refuses_a_bad_issue_url(admin_client_, project, bad):
    response = admin_client_.post(
        "/admin/parity/trackingissue/add/",
        {"project": project.pk, "kind": "url", "key": "k", "url": bad, "state": "unknown"},
    )

    assert response.status_code == 200  # the form again, with the error
    assert response.context["adminform"].form.errors["url"]
    assert not TrackingIssue.objects.exists()


@pytest.mark.parametrize(
    "template",
    ["javascript:alert({number})", "data:text/html,{number}", "ftp://x.example/{number}"],
)
def test_a_project_issue_url_template_must_make_http_urls(project, template):
    from django.core.exceptions import ValidationError

    project.issue_url_template = template
    with pytest.raises(ValidationError) as refused:
        project.clean()
    assert "issue_url_template" in refused.value.message_dict


@pytest.mark.parametrize("bad", ["javascript:alert(1)", "ftp://ci.example/run/1"])
def test_an_upload_with_a_bad_ci_url_is_refused(api, bad):
    from tests.junit_builder import Case, junit_xml

    xml = junit_xml(Case("TestA", "test_a", "passed", "", file="test/test_a.py"))
    response = api.post(
        "/api/v1/uploads/",
        {
            "project": "pytorch-xla",
            "backend": "cpu",
            "commit": "0" * 40,
            "ci_url": bad,
            "file": io.BytesIO(xml),
        },
        format="multipart",
    )

    assert response.status_code == 400, response.content
    assert "ci_url" in response.json()
    assert not Run.objects.exists()


def _constraint_dropped() -> None:
    """As before the rule: the test's transaction undoes it."""
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {TrackingIssue._meta.db_table} DROP CONSTRAINT issue_url_web")


def test_the_migration_clears_bad_urls_stored_before_the_rule(project, upload_run):
    _constraint_dropped()
    bad = "javascript:alert(document.domain)//://x"
    by_url = TrackingIssue.objects.create(project=project, kind="url", key=bad, url=bad)
    keyed = TrackingIssue.objects.create(project=project, kind="github", key="o/r#1", url=bad)
    good = TrackingIssue.objects.create(project=project, kind="github", key="o/r#2", url=GOOD)
    upload_run("cpu", {"test/test_a.py::TestA::test_a": "passed"}, day="2026-04-01")
    Run.objects.update(ci_url="javascript:alert(1)")
    migration = importlib.import_module("parity.migrations.0045_web_urls")

    migration.neutralize(django_apps, None)

    by_url.refresh_from_db(), keyed.refresh_from_db(), good.refresh_from_db()
    assert (by_url.url, by_url.key) == ("", f"unsafe URL removed (issue {by_url.pk})")
    assert (keyed.url, keyed.key) == ("", "o/r#1")
    assert good.url == GOOD
    assert set(Run.objects.values_list("ci_url", flat=True)) == {""}


@pytest.mark.parametrize("bad", ["JaVaScRiPt:alert(1)", "ftp://files.example/issue/1"])
def test_the_dashboard_form_refuses_a_bad_issue_url_beside_the_field(xla, bad):
    from tests.parity.dashboard.conftest import member

    maintainer = member(xla, "maintainer")
    body = {"match": "test/test_a.py", "kind": "tracked", "backends": ["tpu"], "issue_url": bad}

    response = maintainer.post("/p/pytorch-xla/exemptions/", body)

    assert response.status_code == 200
    html = response.content.decode()
    field = html.split('name="issue_url"')[0].rsplit('<div class="field', 1)[-1]
    assert "errorlist" in field, field
    assert not Triage.objects.exists() and not TrackingIssue.objects.exists()
