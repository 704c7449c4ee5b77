"""A URL stored before the URL rule (``parity.pure.web_urls``) that a browser would run, an
issue's or a CI run's, reads as text on every page that shows it: never an ``href``."""

import re
from html import unescape

import pytest
from django.db import connection

from parity.models import Gap, Run, TestCase, TrackingIssue
from parity.services.triage import TriageRequest, triage_create
from tests.parity.dashboard_scenario import A, tid

P = "/p/pytorch-xla"
BAD = "javascript:alert(document.domain)//://x"
SAFE_HREF = re.compile(r"^(?:https?://|/|\?|#|$)")


def hrefs(html: str) -> list[str]:
    return [unescape(h) for h in re.findall(r'\bhref\s*=\s*"([^"]*)"', html)]


@pytest.fixture
def bad_rows(runs, xla):
    """The scenario, a tpu gap tracked by a URL-keyed issue, then every issue URL and CI run
    URL made a script's, as rows written before the rule could be (its check constraint
    dropped inside the test's transaction)."""
    test = TestCase.objects.get(project=xla, key=tid(A, 4))
    triage_create(
        project=xla,
        request=TriageRequest(
            kind="tracked", test=test.pk, backend="tpu", issue_url="https://tracker.example/9"
        ),
    )
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending trigger blocks the ALTER
        cursor.execute(f"ALTER TABLE {TrackingIssue._meta.db_table} DROP CONSTRAINT issue_url_web")
    TrackingIssue.objects.update(url=BAD)
    Run.objects.update(ci_url="JaVaScRiPt:alert(2)")
    return test


def pages(test) -> list[str]:
    tpu_run = Run.objects.filter(backend__name="tpu").latest("started_at").pk
    return [
        f"{P}/gaps/?open=1",
        f"{P}/gaps/?open=1&backend=tpu",
        f"{P}/exemptions/",
        f"{P}/tests/{test.pk}/",
        f"{P}/file/?path={A}&backend=tpu",
        f"{P}/runs/",
        f"{P}/runs/{tpu_run}/",
        f"{P}/queue/",
        f"{P}/skip-reasons/",
        f"{P}/digest/",
    ]


def test_a_stored_script_url_is_never_a_link(client, bad_rows):
    assert Gap.objects.filter(is_open=True, test=bad_rows, triage__isnull=False).exists()
    for page in pages(bad_rows):
        response = client.get(page)
        assert response.status_code == 200, page
        html = response.content.decode()
        unsafe = [h for h in hrefs(html) if not SAFE_HREF.match(h)]
        assert unsafe == [], f"{page}: {unsafe}"


def test_it_reads_as_text_where_the_issue_is_shown(client, bad_rows):
    html = unescape(client.get(f"{P}/tests/{bad_rows.pk}/").content.decode())

    assert BAD in html  # the reader still sees what was stored, as text
    assert f'href="{BAD}' not in html
