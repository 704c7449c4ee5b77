"""Hostile uploads end failed with a clear error, write nothing, and leave other data alone."""

import gzip
import io

import pytest

from parity.models import Result, TestCase, Upload, UploadStatus
from tests.conftest import FIXTURES_DIR

HOSTILE = FIXTURES_DIR / "hostile"
GOOD = FIXTURES_DIR / "junit" / "pytest_small.xml"


def gzip_bomb(decompressed_bytes: int) -> bytes:
    out = io.BytesIO()
    zeros = b"\0" * (1 << 20)
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9) as gz:
        gz.write(b"<testsuites>")
        for _ in range(decompressed_bytes // len(zeros)):
            gz.write(zeros)
    return out.getvalue()


@pytest.fixture
def good_upload(ingest):
    response = ingest(GOOD, commit="b" * 40)
    assert response.status_code == 202
    return Upload.objects.get(pk=response.json()["id"])


def _assert_failed_cleanly(api, response, good_upload, *, error_part: str) -> None:
    assert response.status_code == 202
    detail = api.get(response.json()["url"]).json()
    assert detail["status"] == UploadStatus.FAILED
    assert error_part in detail["error"]
    assert not Result.objects.filter(upload_id=detail["id"]).exists()
    # the earlier upload and its results are untouched, and the server still answers
    good_upload.refresh_from_db()
    assert good_upload.status == UploadStatus.DONE
    assert Result.objects.filter(upload=good_upload).count() == 6
    assert TestCase.objects.count() == 6
    assert api.get(f"/api/v1/uploads/{good_upload.pk}/").status_code == 200


@pytest.mark.parametrize(
    ("fixture", "error_part"),
    [
        ("billion_laughs.xml", "refused"),
        ("xxe_local_file.xml", "refused"),
    ],
)
def test_xml_attacks_fail_without_writing(api, ingest, good_upload, fixture, error_part):
    response = ingest(HOSTILE / fixture)

    _assert_failed_cleanly(api, response, good_upload, error_part=error_part)
    detail = api.get(response.json()["url"]).json()
    assert "root:" not in detail["error"]  # /etc/passwd never leaks into the message


def test_gzip_bomb_stops_at_the_decompressed_limit(api, ingest, good_upload, settings):
    settings.PARITY_MAX_XML_BYTES = 5 * 1024 * 1024
    response = ingest(("report.xml.gz", gzip_bomb(200 * 1024 * 1024)))

    _assert_failed_cleanly(api, response, good_upload, error_part="PARITY_MAX_XML_BYTES")


def test_ten_times_over_the_size_limit_is_refused(api, ingest, good_upload, settings):
    settings.PARITY_MAX_UPLOAD_BYTES = 64 * 1024
    big = GOOD.read_bytes().replace(
        b"</testsuites>", b"<!--" + b"x" * 640 * 1024 + b"--></testsuites>"
    )

    response = ingest(("big.xml", big))

    assert response.status_code == 413
    assert "PARITY_MAX_UPLOAD_BYTES" in response.json()["detail"]
    assert Upload.objects.count() == 1
    good_upload.refresh_from_db()
    assert good_upload.status == UploadStatus.DONE
    assert api.get(f"/api/v1/uploads/{good_upload.pk}/").status_code == 200


def test_truncated_xml_fails_and_keeps_nothing(api, ingest, good_upload):
    truncated = GOOD.read_bytes()[:700]

    response = ingest(("truncated.xml", truncated))

    _assert_failed_cleanly(api, response, good_upload, error_part="truncated.xml: ")


def test_a_zip_inside_the_zip_is_named_in_the_uploads_warnings(api, ingest):
    import zipfile

    inner, outer = io.BytesIO(), io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zipped:
        zipped.writestr("shard-2/report.xml", GOOD.read_bytes())
    with zipfile.ZipFile(outer, "w") as zipped:
        zipped.writestr("shard-1/report.xml", GOOD.read_bytes())
        zipped.writestr("shard-2.zip", inner.getvalue())

    response = ingest(("reports.zip", outer.getvalue()))

    detail = api.get(response.json()["url"]).json()
    assert detail["status"] == UploadStatus.DONE, detail
    assert detail["warnings"] == [
        "shard-2.zip in reports.zip is an archive inside the archive and was skipped (parity "
        "reads one level): upload it as a file of its own, or archive the .xml files themselves."
    ]
