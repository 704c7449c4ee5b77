"""The upload API as CI uses it: auth, validation, dedup, status and run completion."""

import re

import pytest
from rest_framework.test import APIClient

from parity.models import Result, Run, TestCase, Upload, UploadStatus
from parity.services.projects import project_create, upload_token_create
from tests.conftest import FIXTURES_DIR
from tests.junit_builder import Case, junit_xml
from tests.uploads import post_upload

PYTEST_SMALL = FIXTURES_DIR / "junit" / "pytest_small.xml"


def test_upload_is_queued_then_ingested_with_counts(api, ingest):
    response = ingest(PYTEST_SMALL, backend="tpu", branch="master", complete="true")

    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "queued"
    assert body["url"].endswith(f"/api/v1/uploads/{body['id']}/")
    detail = api.get(body["url"]).json()
    assert detail["status"] == "done", detail["error"]
    assert detail["counts"] == {"total": 6, "passed": 2, "skipped": 2, "failed": 1, "error": 1}
    assert detail["run"] == body["run"]
    run = Run.objects.get(pk=body["run"])
    assert (run.backend.name, run.branch, run.complete) == ("tpu", "master", True)
    assert Result.objects.filter(run=run).count() == 6


def test_same_content_twice_to_the_same_run_stores_one_set_of_results(ingest):
    first = ingest(PYTEST_SMALL, commit="a" * 40)
    second = ingest(PYTEST_SMALL, commit="a" * 40)

    assert (first.status_code, second.status_code) == (202, 200)
    assert second.json()["id"] == first.json()["id"]
    assert Upload.objects.count() == 1
    assert Result.objects.count() == 6


def test_shards_with_one_run_key_share_a_run(ingest):
    xml = PYTEST_SMALL.read_bytes()
    first = ingest(("shard1.xml", xml), run="nightly-42")
    second = ingest(("shard2.xml", xml.replace(b"test_add", b"test_sub")), run="nightly-42")

    assert first.json()["run"] == second.json()["run"]
    assert Upload.objects.filter(run_id=first.json()["run"]).count() == 2


def test_backend_alias_is_accepted(project, ingest):
    project.backends.filter(name="gpu").update(aliases=["cuda"])
    response = ingest(PYTEST_SMALL, backend="CUDA")

    assert response.status_code == 202
    assert Run.objects.get(pk=response.json()["run"]).backend.name == "gpu"


def test_unknown_backend_names_the_known_ones(ingest):
    response = ingest(PYTEST_SMALL, backend="ipu")

    assert response.status_code == 400
    assert response.json()["detail"] == (
        "Unknown backend 'ipu' for project 'pytorch-xla'. Known: cpu, gpu, neuron, tpu."
    )
    assert not Run.objects.exists()


def test_unknown_project_names_the_tokens_project(ingest):
    response = ingest(PYTEST_SMALL, project="jax")

    assert response.status_code == 400
    assert "Unknown project 'jax'" in response.json()["detail"]
    assert "pytorch-xla" in response.json()["detail"]


def test_missing_fields_are_named(api):
    response = api.post("/api/v1/uploads/", {"project": "pytorch-xla"}, format="multipart")

    assert response.status_code == 400
    assert set(response.json()) >= {"backend", "commit", "file"}


def test_no_token_cannot_upload(project):
    response = post_upload(APIClient(), PYTEST_SMALL)

    assert response.status_code == 401
    assert not Upload.objects.exists()


def test_bad_token_cannot_upload(project):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")

    response = post_upload(client, PYTEST_SMALL)

    assert response.status_code == 401
    assert (
        response.json()["detail"]
        == "Invalid or revoked token: neither a project's nor an active user's."
    )


def test_token_of_project_a_cannot_upload_to_project_b(project, api):
    other = project_create(slug="jax", backends=["cpu", "tpu"], reference="cpu")
    other_client = APIClient()
    other_client.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=other)}")

    response = post_upload(other_client, PYTEST_SMALL, project="pytorch-xla")

    assert response.status_code == 403
    assert "cannot upload to 'pytorch-xla'" in response.json()["detail"]
    assert not Upload.objects.exists()


def test_a_token_cannot_read_another_projects_upload(ingest):
    upload_url = ingest(PYTEST_SMALL).json()["url"]
    other = project_create(slug="jax", backends=["cpu"], reference="cpu")
    other_client = APIClient()
    other_client.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=other)}")

    assert other_client.get(upload_url).status_code == 404


def test_oversized_request_is_refused_before_it_is_read(api, settings):
    settings.PARITY_MAX_UPLOAD_BYTES = 1000
    response = post_upload(api, ("big.xml", b"<testsuites/>" + b" " * 10_000))

    assert response.status_code == 413
    assert "PARITY_MAX_UPLOAD_BYTES" in response.json()["detail"]
    assert not Upload.objects.exists()
    assert not Run.objects.exists()


def test_run_complete_endpoint_marks_the_run(api, ingest):
    run_id = ingest(PYTEST_SMALL).json()["run"]
    assert not Run.objects.get(pk=run_id).complete

    response = api.post(f"/api/v1/runs/{run_id}/complete/")

    assert response.status_code == 200
    assert response.json()["complete"] is True
    assert Run.objects.get(pk=run_id).complete


@pytest.mark.parametrize("path", ["/api/schema/", "/api/docs/"])
def test_openapi_schema_and_docs_are_served(client, path):
    response = client.get(path)

    assert response.status_code == 200
    if path == "/api/schema/":
        assert b"/api/v1/uploads/" in response.content


def test_failed_upload_status_reads_plainly(api, ingest):
    response = ingest(("broken.xml", b"<testsuite><testcase name='a'>"))
    detail = api.get(response.json()["url"]).json()

    assert detail["status"] == UploadStatus.FAILED
    assert detail["error"].startswith("broken.xml: ")
    assert detail["counts"] == {}
    assert not Result.objects.exists()


def test_a_file_spooled_to_disk_is_accepted_and_ingested(api, ingest, settings):
    # Past FILE_UPLOAD_MAX_MEMORY_SIZE Django hands the view a temporary file on disk.
    cases = [Case("test.test_ops.TestOps", f"test_case_{i:06d}_" + "x" * 60) for i in range(24_000)]
    xml = junit_xml(*cases)
    assert len(xml) > settings.FILE_UPLOAD_MAX_MEMORY_SIZE

    response = ingest(("big.xml", xml))

    assert response.status_code == 202, response.content
    detail = api.get(response.json()["url"]).json()
    assert detail["status"] == "done", detail["error"]
    assert detail["counts"]["total"] == len(cases)


def test_an_empty_request_without_content_type_names_the_missing_fields(api, project):
    response = api.generic("POST", "/api/v1/uploads/", data=b"", content_type="")

    assert response.status_code == 400
    assert set(response.json()) >= {"project", "backend", "commit", "file"}


def test_long_names_are_stored_whole(api, ingest):
    params = "-".join(f"param{i}={'v' * 20}" for i in range(24))
    parametrized = f"test_conv[{params}]"
    assert len(parametrized) > 600
    long_class = "TestGenerated" + "X" * 100_000
    xml = junit_xml(
        Case("test.test_conv.TestConv", parametrized),
        Case(long_class, "test_x", "skipped", "skip " * 1000),
    )

    response = ingest(("long.xml", xml))

    detail = api.get(response.json()["url"]).json()
    assert detail["status"] == "done", detail["error"]
    assert detail["counts"]["total"] == 2
    names = dict(TestCase.objects.values_list("name", "class_name"))
    assert names == {parametrized: "TestConv", "test_x": long_class}
    assert TestCase.objects.get(name="test_x").key == f"{long_class}::test_x"


def test_a_test_file_path_over_the_limit_fails_the_upload_clearly(api, ingest):
    xml = junit_xml(Case("TestA", "test_a", file="test/" + "d/" * 300 + "test_a.py"))

    detail = api.get(ingest(("deep.xml", xml)).json()["url"]).json()

    assert detail["status"] == "failed"
    assert detail["error"].startswith("deep.xml: test 'test_a' names a file of 614 characters")
    assert "the limit is 500" in detail["error"]
    assert not Result.objects.exists()


def test_api_docs_load_swagger_ui_from_this_site(client):
    html = client.get("/api/docs/").content.decode()

    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert any(a.endswith("swagger-ui-bundle.js") for a in assets), assets
    assert [a for a in assets if "://" in a or a.startswith("//")] == []
