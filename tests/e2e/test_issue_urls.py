"""The stored-XSS probe of issue 48 on the live stack: CI's upload token imports a list whose
entry cites ``javascript:alert(document.domain)//://x`` as its issue, through gunicorn, with
the results the Celery worker ingested. The entry is reported as not imported and the rest of
the list is; no page that shows issues links to a script; every page sends the strict
Content-Security-Policy; the export CI reads does not carry the URL."""

import csv
import io
import json
import re
from html import unescape

import pytest

from parity.models import BackendState, Gap, TrackingIssue
from parity.pure.web_urls import PROBLEM
from tests.e2e.expect import upload_settled
from tests.e2e.stack import wait_for
from tests.junit_builder import Case, junit_xml

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
FILE = "test/test_ops.py"
BAD = "javascript:alert(document.domain)//://x"
GOOD = "https://github.com/pytorch/xla/issues/41"
P = "/p/pytorch-xla"


def sent(http_api, live, backend: str, outcomes: dict[str, str]) -> int:
    xml = junit_xml(*(Case("TestOps", n, s, "", file=FILE) for n, s in outcomes.items()))
    reply = http_api.post_upload(
        ("report.xml", xml), backend=backend, complete="true", run=f"{backend}-1"
    )
    assert reply.status == 202, str(reply)
    body = upload_settled(http_api, reply.body["id"], seconds=60, live=live)
    assert body["status"] == "done", body
    return reply.body["run"]


def sheet() -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["test_file", "test_class", "test_name", "skip_reason", "issue"])
    writer.writerow([FILE, "TestOps", "test_bad", "fails on tpu", BAD])
    writer.writerow([FILE, "TestOps", "test_good", "fails on tpu", GOOD])
    return out.getvalue()


def test_a_script_issue_url_imported_with_the_upload_token_is_refused(http_api, live):
    passing = {"test_bad": "passed", "test_good": "passed", "test_ok": "passed"}
    sent(http_api, live, "cpu", passing)
    tpu = sent(http_api, live, "tpu", {**passing, "test_bad": "failed", "test_good": "failed"})
    wait_for(
        lambda: BackendState.objects.filter(backend__name="tpu", current_run_id=tpu).exists(),
        seconds=60,
        what="tpu's run to be current",
    )
    body = json.dumps({"format": "amd-csv", "content": sheet(), "backends": ["tpu"]}).encode()

    reply = http_api.request(
        "POST",
        "/api/v1/projects/pytorch-xla/exemptions/import/",
        body=body,
        headers={"Content-Type": "application/json"},
    )

    assert reply.status == 200, str(reply)
    assert (reply.body["created"], reply.body["not_imported"]) == (1, 1)
    (refused,) = [u for u in reply.body["unmatched"] if u["action"] == "not imported"]
    assert refused["where"] == "line 2" and PROBLEM in refused["why"]
    assert set(TrackingIssue.objects.values_list("url", flat=True)) == {GOOD}
    gap = Gap.objects.get(backend__name="tpu", test__name="test_bad", is_open=True)
    pages = [
        f"{P}/gaps/?open=1",
        f"{P}/exemptions/",
        f"{P}/tests/{gap.test_id}/",
        f"{P}/file/?path={FILE}&backend=tpu",
        f"{P}/runs/{tpu}/",
        f"{P}/queue/",
    ]
    for page in pages:
        answer = http_api.request("GET", page, headers={"Authorization": ""})
        assert answer.status == 200, f"{page}: {answer}"
        assert "script-src 'self';" in answer.headers["Content-Security-Policy"], page
        links = [unescape(h) for h in re.findall(r'href="([^"]*)"', answer.body)]
        assert not [h for h in links if re.match(r"\s*[a-z]+:", h, re.I) and "://" not in h[:9]]
        assert "javascript:" not in answer.body.lower(), page
    export = http_api.request("GET", "/api/v1/projects/pytorch-xla/exemptions/export/amd-csv/")
    assert export.status == 200 and GOOD in export.body
    assert "javascript" not in export.body.lower()
