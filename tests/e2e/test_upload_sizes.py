"""Uploads at the sizes and shapes CI sends, through gunicorn and a real worker: a 60 MB XML, a
20 MB zip of a test-reports folder, 600-character parametrized names, an empty request."""

import time

import pytest

from parity.models import Result, TestCase
from tests.e2e.expect import stored_counts, upload_settled
from tests.e2e.generate import junit_write, zip_write

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

MB = 1024 * 1024


def test_60_mb_xml_is_stored_exactly(http_api, live, tmp_path):
    report = junit_write(tmp_path / "test-results.xml", target_bytes=60 * MB)
    assert 300_000 <= report.total <= 600_000

    started = time.monotonic()
    reply = http_api.post_upload(report.path)
    assert reply.status == 202, str(reply)
    posted = time.monotonic() - started
    body = upload_settled(http_api, reply.body["id"], seconds=420, live=live)

    stored = time.monotonic() - started
    print(f"60 MB, {report.total} cases: POST {posted:.1f} s, stored after {stored:.1f} s")
    assert body["status"] == "done", body["error"]
    assert body["counts"] == report.expected_counts()
    assert stored_counts(upload_id=body["id"]) == report.expected_counts()


def test_20_mb_zip_of_a_reports_folder_is_stored_exactly(http_api, live, tmp_path):
    reports = {
        f"test-reports/python-pytest/shard{n}/junit-{n}.xml": junit_write(
            tmp_path / f"junit-{n}.xml", cases=20_000, prefix=f"s{n}_", system_out_bytes=260_000
        )
        for n in range(5)
    }
    archive = tmp_path / "test-reports.zip"
    zip_write(archive, {name: report.path for name, report in reports.items()})
    assert 18 * MB <= archive.stat().st_size <= 24 * MB
    expected = {
        label: sum(r.expected_counts()[label] for r in reports.values())
        for label in ("total", "passed", "skipped", "failed", "error")
    }

    reply = http_api.post_upload(archive)
    assert reply.status == 202, str(reply)
    body = upload_settled(http_api, reply.body["id"], seconds=180, live=live)

    assert body["status"] == "done", body["error"]
    assert body["counts"] == expected
    assert stored_counts(upload_id=body["id"]) == expected


def _parametrized_name(length: int) -> str:
    """A pytest id as long parametrizations make them: shapes, strides, dtypes, devices."""
    name = "test_conv2d_backward"
    params = []
    n = 0
    while len(name) + len("-".join(params)) + 2 < length:
        params.append(f"input_shape{n}=(8, 3, {n + 31}, {n + 31})-stride=(1, {n % 3 + 1})")
        n += 1
    full = f"{name}[{'-'.join(params)}"
    return full[: length - 1] + "]"


def test_600_character_name_and_100k_character_classname_are_stored_whole(
    http_api, live, project, tmp_path
):
    long_name = _parametrized_name(600)
    long_classname = "TestGenerated" + "".join(f"Variant{n:06d}" for n in range(7692))
    assert len(long_name) == 600 and len(long_classname) >= 100_000
    xml = (
        '<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="pytest">'
        f'<testcase classname="test.test_nn.TestConvolutionNN" name="{long_name}" time="1.5"/>'
        f'<testcase classname="{long_classname}" name="test_x" time="0.1"/>'
        '<testcase classname="test.test_nn.TestConvolutionNN" name="test_short" time="0.1"/>'
        "</testsuite></testsuites>\n"
    )

    reply = http_api.post_upload(("long-names.xml", xml.encode()))
    assert reply.status == 202, str(reply)
    body = upload_settled(http_api, reply.body["id"], seconds=60, live=live)

    assert body["status"] == "done", body["error"]
    assert body["counts"]["total"] == 3
    parametrized = TestCase.objects.get(
        project=project, class_name="TestConvolutionNN", name=long_name
    )
    assert parametrized.file == "test/test_nn.py"
    generated = TestCase.objects.get(project=project, name="test_x")
    assert generated.class_name == long_classname
    assert Result.objects.filter(upload_id=body["id"]).count() == 3


def test_request_without_body_is_a_400(http_api, live):
    reply = http_api.request("POST", "/api/v1/uploads/", body=None, headers={})

    assert reply.status == 400, str(reply)
    assert "detail" in reply.body or "file" in reply.body, reply.body


def test_2_5_mb_plain_xml_is_accepted_and_stored(http_api, live, tmp_path):
    report = junit_write(tmp_path / "junit.xml", target_bytes=int(2.5 * MB))
    assert report.path.stat().st_size > 2.5 * MB

    reply = http_api.post_upload(report.path)

    assert reply.status == 202, str(reply)
    body = upload_settled(http_api, reply.body["id"], seconds=60, live=live)
    assert body["status"] == "done", body["error"]
    assert body["counts"] == report.expected_counts()
