"""What the live API answers besides a stored upload: the warnings of an upload that skipped
part of what it was sent, and JSON (not Django's HTML page) for any path under /api/ that no
endpoint matches, as the schema promises."""

import stat
import zipfile

import pytest

from tests.e2e.expect import upload_settled
from tests.e2e.generate import junit_write

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_symlink_skipped_in_a_zip_is_named_in_the_upload(http_api, live, tmp_path):
    report = junit_write(tmp_path / "report.xml", cases=20)
    archive = tmp_path / "reports.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.write(report.path, arcname="test-reports/report.xml")
        link = zipfile.ZipInfo("test-reports/latest.xml")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16  # as `zip -y` stores a link
        zipped.writestr(link, "report.xml")

    reply = http_api.post_upload(archive)

    assert reply.status == 202, str(reply)
    assert reply.body["warnings"] == []  # nothing is known before ingest
    body = upload_settled(http_api, reply.body["id"], seconds=60, live=live)
    assert (body["status"], body["counts"]) == ("done", report.expected_counts()), body
    assert body["warnings"] == [
        "test-reports/latest.xml in reports.zip is a symbolic link and was skipped: archive "
        "the file itself (zip without -y)."
    ]


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/uploads/not-a-number/",
        "/api/v1/runs/-1/verdict/",
        "/api/v1/projects/a.b/parity/",
        "/api/v1/projects/pytorch-xla/tests/x/",
        "/api/v1/no-such-endpoint/",
        "/api/nothing",
    ],
)
def test_unmatched_api_paths_answer_json_404(http_api, live, path):
    reply = http_api.request("GET", path)

    assert reply.status == 404
    assert isinstance(reply.body, dict) and reply.body["detail"].startswith("No API endpoint")


def test_unmatched_pages_keep_the_html_404(http_api, live):
    reply = http_api.request("GET", "/no-such-page/")

    assert reply.status == 404
    assert isinstance(reply.body, str)


def test_a_request_line_over_the_servers_limit_answers_the_documented_414(http_api, live):
    from tests.api.test_schema import OPENAPI

    reply = http_api.request("GET", "/api/v1/projects/pytorch-xla/gaps/?q=" + "x" * 5000)

    assert reply.status == 414, str(reply)
    documented = OPENAPI["paths"]["/api/v1/projects/{slug}/gaps/"]["get"]["responses"]["414"]
    assert reply.headers["Content-Type"].split(";")[0] in documented["content"]
