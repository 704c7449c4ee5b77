"""The OpenAPI schema at /api/schema/ tells the truth about every endpoint.

First what the schema says (file parts are bytes; every refusal is documented with its body),
then schemathesis: requests generated from the schema (25 per operation, derandomized) must
never get a 5xx, and every answer must match what the schema documents for it (status code,
content type, body). A real project, its upload token and a few ingested runs stand behind them.

The requests go to Django's WSGI handler in-process (``case.call(app=...)``) on the test's own
connection, the way Django's test client runs a request. A live server (``live_server``) was
tried first and works, but needs ``transactional_db``: truncating every table after each of the
13 operations' tests cost over a third of the suite's time budget. In-process, each call runs in
a savepoint: kept when it succeeds (later examples meet the runs and uploads of earlier ones),
rolled back on a 5xx (one database error cannot poison the examples after it). The ``on_commit``
callbacks a call queues (the eager Celery ingest of an upload, a run's parity refresh) run right
after it, as the commit would run them.
"""

import contextlib
import io
import json

import jsonschema
import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from parity.models import Gap, Reason, TestCase, Upload
from tests.junit_builder import Case, junit_xml

MAX_EXAMPLES = 25
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


PROJECT = "pytorch-xla"  # tests/conftest.py's project
BACKENDS = ["cpu", "gpu", "neuron", "tpu"]


def _schema() -> dict:
    """What /api/schema/ serves (test_the_view_serves_this_schema), built once at collection,
    which schemathesis needs: its fixture-based lazy loader does not run on pytest 9 (it sets
    ``request.node._nodeid``, which pytest no longer has)."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(schema, renderer_context={}))


OPENAPI = _schema()


def test_the_view_serves_this_schema(client):
    response = client.get("/api/schema/", {"format": "json"})

    assert response.status_code == 200
    assert response.json() == OPENAPI


def _operations():
    for path, item in OPENAPI["paths"].items():
        for method, operation in item.items():
            yield f"{method.upper()} {path}", operation


def test_upload_file_parts_are_binary_not_uris():
    upload = OPENAPI["components"]["schemas"]["UploadCreate"]["properties"]["file"]

    assert upload["type"] == "array"
    assert upload["items"] == {"type": "string", "format": "binary"}


UPLOAD_PARTS = {
    "attributes": {"arch": "gfx942", "rocm": "7.1"},
    "run_manifest": {"files": [{"file": "test/a.py", "exit_code": 0, "report": True}]},
    "hw_classification": {"test/a.py::TestA": "GENERIC"},
}


@pytest.mark.parametrize(("part", "value"), UPLOAD_PARTS.items())
def test_json_parts_are_documented_as_the_json_the_api_reads(api, part, value):
    body = OPENAPI["paths"]["/api/v1/uploads/"]["post"]["requestBody"]["content"]
    schema = OPENAPI["components"]["schemas"]["UploadCreate"]["properties"][part]
    assert body["multipart/form-data"]["encoding"][part] == {"contentType": "application/json"}
    assert schema["type"] == "object" and "default" not in schema
    jsonschema.Draft7Validator(schema).validate(value)
    assert not jsonschema.Draft7Validator(schema).is_valid(json.dumps(value))  # not text

    xml = junit_xml(Case("TestA", "test_1", "passed", file="test/a.py"))
    response = api.post(
        "/api/v1/uploads/",
        {"project": PROJECT, "backend": "tpu", "commit": "a" * 40, "file": [io.BytesIO(xml)],
         part: json.dumps(value)},
        format="multipart",
    )  # fmt: skip
    assert response.status_code == 202, response.content


def test_every_operation_documents_the_servers_414():
    operations = [op for path in OPENAPI["paths"].values() for op in path.values()]
    assert operations and all("414" in op["responses"] for op in operations)
    assert set(OPENAPI["paths"]["/api/v1/uploads/"]["post"]["responses"]["414"]["content"]) == {
        "text/html"
    }


@pytest.mark.parametrize(
    ("sent", "accepted"),
    [
        ({}, False),  # neither: the API answers 400, so the schema must not allow it
        ({"file": []}, False),
        ({"run_manifest": ""}, False),
        ({"file": ["results.xml"]}, True),
    ],
)
def test_an_upload_the_schema_allows_is_one_the_api_takes(api, sent, accepted):
    upload = OPENAPI["components"]["schemas"]["UploadCreate"]
    body = {"project": PROJECT, "backend": "tpu", "commit": "a" * 40, **sent}
    assert jsonschema.Draft7Validator(upload).is_valid(body) is accepted

    if "file" in body:  # the file part's bytes, not its name
        xml = junit_xml(Case("TestA", "test_1", "passed"))
        body["file"] = [io.BytesIO(xml) for _ in body["file"]]
    response = api.post("/api/v1/uploads/", body, format="multipart")
    assert response.status_code == (202 if accepted else 400), response.content


def test_path_parameters_carry_the_url_converters_limits():
    """A slug or id the URL pattern rejects gets Django's HTML 404, not the API's JSON one."""
    schemas = {
        (name, parameter["name"]): parameter["schema"]
        for name, operation in _operations()
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "path"
    }

    assert set(map(json.dumps, schemas.values())) == {
        json.dumps({"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"}),
        json.dumps({"type": "integer", "minimum": 0}),
    }


def test_every_operation_documents_its_refusals_with_a_json_body():
    undocumented = {}
    for name, operation in _operations():
        responses = operation["responses"]
        expected = {"401", "403", "429"}
        if "{" in name:  # a project slug or an object id that may not exist
            expected.add("404")
        missing = sorted(expected - responses.keys())
        if missing:
            undocumented[name] = missing
        for code, response in responses.items():
            # 414 is the web server's own answer (HTML), sent before any of parity runs.
            if code.startswith("4") and code != "414":
                assert "application/json" in response.get("content", {}), (name, code)
    assert undocumented == {}


@pytest.mark.parametrize(
    ("operation", "codes"),
    [
        ("POST /api/v1/uploads/", {"200", "202", "400", "413", "415"}),
        ("GET /api/v1/projects/{slug}/parity/", {"200", "400"}),
        ("GET /api/v1/projects/{slug}/gaps/", {"200", "400"}),
        ("GET /api/v1/projects/{slug}/tests/", {"200", "400"}),
        ("POST /api/v1/projects/{slug}/triage/", {"201", "400", "415"}),
        ("DELETE /api/v1/projects/{slug}/triage/{id}/", {"204"}),
    ],
)
def test_operation_documents_its_own_statuses(operation, codes):
    documented = dict(_operations())[operation]["responses"].keys()

    assert codes <= documented


def test_error_shapes_are_detail_or_field_errors():
    schemas = OPENAPI["components"]["schemas"]

    assert schemas["Error"]["required"] == ["detail"]
    assert schemas["ValidationError"]["additionalProperties"]["oneOf"][0] == {
        "type": "array",
        "items": {"type": "string"},
    }
    bad_request = [ref["$ref"] for ref in schemas["BadRequest"]["oneOf"]]
    assert bad_request == ["#/components/schemas/ValidationError", "#/components/schemas/Error"]


# --- schemathesis ----------------------------------------------------------------------------


def _schemathesis_config(
    *, mode: str = "positive", examples: int = MAX_EXAMPLES
) -> SchemathesisConfig:
    # Most generated slugs and bodies name the real project and its backends, or every request
    # would stop at 404 / 400 and the paths behind them (ingest, parity) would go untried.
    binding = {"probability": 0.7}
    return SchemathesisConfig.from_dict(
        {
            "seed": 20240601,
            "generation": {
                "max-examples": examples,
                "deterministic": True,
                "mode": mode,
                # The test sends a real token; a generated one would only trip the
                # failed-token throttle.
                "with-security-parameters": False,
                "database": "none",
            },
            "phases": {"stateful": {"enabled": False}},
            "dictionaries": {
                "projects": {"values": [PROJECT]},
                "backends": {"values": BACKENDS},
            },
            "parameters": {
                "path.slug": {"dictionary": "projects", **binding},
                "body.project": {"dictionary": "projects", **binding},
                "body.backend": {"dictionary": "backends", **binding},
            },
        }
    )


api_schema = schemathesis.openapi.from_dict(OPENAPI, config=_schemathesis_config())
# Paths the URL patterns reject (an id that is not a number, a slug with a dot): Django answers
# them before any view, so they must get the same documented JSON 404 as a view's own.
NEGATIVE_EXAMPLES = 10
negative_paths_schema = schemathesis.openapi.from_dict(
    OPENAPI, config=_schemathesis_config(mode="negative", examples=NEGATIVE_EXAMPLES)
).include(method="GET", path_regex=r"\{")


@contextlib.contextmanager
def _on_the_test_connection():
    """Like Django's test client: no close_old_connections around the request, which would
    close the test's own connection mid-transaction."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def call(project, token, django_capture_on_commit_callbacks):
    assert (project.slug, sorted(project.backends.values_list("name", flat=True))) == (
        PROJECT,
        BACKENDS,
    )
    app = WSGIHandler()

    def _call(case):
        """Send the case; keep what it wrote, and run the on_commit callbacks it queued (the
        eager ingest, a run's parity refresh) as a commit would."""
        with transaction.atomic(), _on_the_test_connection():
            with django_capture_on_commit_callbacks(execute=True):
                response = case.call(app=app, headers={"Authorization": f"Token {token}"})
            if response.status_code >= 500:  # a database error must not poison what follows
                transaction.set_rollback(True)
        return response

    return _call


@pytest.fixture
def known_ids(ingest, call, eager_errors_propagate) -> dict[str, list[int]]:
    """Two complete runs with a skip, a failure and a triage, so that generated ids can name
    real objects and the 200 answers of the detail endpoints get checked too."""
    cpu = [Case("TestA", f"test_{n}", file="test/a.py") for n in range(3)]
    tpu = [
        Case("TestA", "test_0", "skipped", "not on TPU, see #4298", file="test/a.py"),
        Case("TestA", "test_1", "failed", "boom", file="test/a.py"),
    ]
    uploads = [
        ingest(("cpu.xml", junit_xml(*cpu)), backend="cpu", complete="true").json(),
        ingest(("tpu.xml", junit_xml(*tpu)), backend="tpu", complete="true").json(),
    ]
    gap = Gap.objects.filter(state="failed").get()
    create = api_schema["/api/v1/projects/{slug}/triage/"]["POST"].Case(
        path_parameters={"slug": PROJECT},
        body={"kind": "intended", "gap": gap.pk, "note": "no such op on TPU"},
        media_type="application/json",
    )
    triage = call(create)
    create.validate_response(triage, checks=CHECKS)
    assert triage.status_code == 201, triage.text
    aim = api_schema["/api/v1/projects/{slug}/targets/"]["POST"].Case(
        path_parameters={"slug": PROJECT},
        body={"backend": "tpu", "score": 0.9, "due": "2027-01-01"},
        media_type="application/json",
    )
    target = call(aim)
    aim.validate_response(target, checks=CHECKS)
    assert target.status_code == 201, target.text
    return {
        "upload": [u["id"] for u in uploads],
        "run": [u["run"] for u in uploads],
        "test": list(TestCase.objects.values_list("pk", flat=True)),
        "reason": list(Reason.objects.values_list("pk", flat=True)),
        "gap": list(Gap.objects.values_list("pk", flat=True)),
        "triage": [triage.json()["id"]],
        "target": [target.json()["id"]],
    }


# Which objects a path's {id} names.
ID_KINDS = {
    "/api/v1/uploads/{id}/": "upload",
    "/api/v1/runs/{id}/complete/": "run",
    "/api/v1/runs/{id}/verdict/": "run",
    "/api/v1/projects/{slug}/tests/{id}/": "test",
    "/api/v1/projects/{slug}/skip-reasons/{id}/trend/": "reason",
    "/api/v1/projects/{slug}/triage/{id}/": "triage",
    "/api/v1/projects/{slug}/targets/{id}/": "target",
}


def _known(generated, ids: list[int]):
    """An even generated id becomes a real one (deterministically); an odd one stays, and
    most likely names nothing: both answers get checked."""
    if isinstance(generated, int) and generated % 2 == 0:
        return ids[generated // 2 % len(ids)]
    return generated


def _name_known_objects(case, known_ids: dict[str, list[int]]) -> None:
    kind = ID_KINDS.get(case.path)
    if kind is not None:
        case.path_parameters["id"] = _known(case.path_parameters["id"], known_ids[kind])
    if (case.method, case.path) == ("POST", "/api/v1/projects/{slug}/triage/"):
        for field in ("gap", "test", "reason"):
            if isinstance(case.body, dict) and field in case.body:
                case.body[field] = _known(case.body[field], known_ids[field])


def _assert_ingested(case, response) -> None:
    """An accepted upload was ingested to the end: done, or failed with a message. A crash in
    the eager task answers no 5xx, but leaves the upload queued or processing."""
    if (case.method, case.path, response.status_code) != ("POST", "/api/v1/uploads/", 202):
        return
    upload = Upload.objects.get(pk=response.json()["id"])
    assert upload.status in {"done", "failed"}, (upload.status, upload.error)


@api_schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_api_answers_as_documented(case, call, known_ids):
    _name_known_objects(case, known_ids)
    response = call(case)

    case.validate_response(response, checks=CHECKS)
    _assert_ingested(case, response)


def test_a_schema_valid_upload_is_accepted_and_ingested(call, eager_errors_propagate):
    """Generated uploads are only worth sending if they get past validation: a multipart
    request built from the schema with the real project is accepted and ingested."""
    operation = api_schema["/api/v1/uploads/"]["POST"]
    case = operation.Case(
        body={"project": PROJECT, "backend": "cpu", "commit": "a", "file": [b"<x/>"]},
        media_type="multipart/form-data",
    )
    response = call(case)

    case.validate_response(response, checks=CHECKS)
    assert response.status_code == 202, response.text
    upload = Upload.objects.get(pk=response.json()["id"])
    assert upload.status == "failed"  # <x/> is not JUnit: ingest ran and said so
    assert upload.error


# --- Security blocks and 404s, as the access rules and the URL patterns have them --------------


def _concrete(path: str, known_ids: dict[str, list[int]]) -> str:
    kind = ID_KINDS.get(path)
    path = path.replace("{slug}", PROJECT)
    return path.replace("{id}", str(known_ids[kind][0])) if kind else path


ANONYMOUS_BODIES = {
    "POST /api/v1/projects/{slug}/manifest/resolve/": {"backend": "tpu", "tests": []},
    "POST /api/v1/projects/{slug}/triage/": {"kind": "intended", "note": "x"},
    "POST /api/v1/projects/{slug}/targets/": {"backend": "tpu", "score": 0.9, "due": "2027-01-01"},
}


def test_security_blocks_say_which_operations_anyone_may_call(client, known_ids):
    """An operation whose security lists ``{}`` answers a request without credentials (the
    project is public); every other one refuses it with 401. The upload API takes upload
    tokens only."""
    wrong = {}
    for name, operation in _operations():
        method, path = name.split(" ", 1)
        body = ANONYMOUS_BODIES.get(name)
        response = client.generic(
            method,
            _concrete(path, known_ids),
            json.dumps(body) if body else "",
            content_type="application/json",
        )
        anyone = response.status_code not in (401, 403)
        if anyone != ({} in operation["security"]):
            wrong[name] = (response.status_code, operation["security"])
    assert wrong == {}
    uploads = [op["security"] for name, op in _operations() if "uploads" in name or "runs" in name]
    verdict = dict(_operations())["GET /api/v1/runs/{id}/verdict/"]["security"]
    assert verdict == [{"uploadToken": []}, {"cookieAuth": []}, {}]
    assert [s for s in uploads if s != verdict] == [[{"uploadToken": []}]] * 3


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/uploads/not-a-number/",
        "/api/v1/runs/-1/verdict/",
        "/api/v1/projects/a.b/gaps/",
        "/api/v1/projects/pytorch-xla/skip-reasons/x/trend/",
        "/api/v1/nothing-here/",
    ],
)
def test_paths_the_url_patterns_reject_answer_the_documented_json_404(client, project, path):
    response = client.get(path, HTTP_AUTHORIZATION="Token whatever")

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert set(response.json()) == set(OPENAPI["components"]["schemas"]["Error"]["properties"])


def test_an_upload_naming_an_unknown_project_gets_its_documented_400(call):
    operation = api_schema["/api/v1/uploads/"]["POST"]
    case = operation.Case(
        body={"project": "no-such-project", "backend": "cpu", "commit": "a", "file": [b"<x/>"]},
        media_type="multipart/form-data",
    )
    response = call(case)

    case.validate_response(response, checks=CHECKS)
    assert response.status_code == 400
    assert response.json()["detail"].startswith("Unknown project 'no-such-project'")


def test_an_upload_documents_its_warnings():
    upload = OPENAPI["components"]["schemas"]["Upload"]["properties"]["warnings"]

    assert upload["type"] == "array" and upload["items"] == {"type": "string"}
    assert upload["readOnly"] is True


@negative_paths_schema.parametrize()
@settings(
    max_examples=NEGATIVE_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_api_answers_invalid_requests_as_documented(case, call, project):
    response = call(case)

    case.validate_response(response, checks=CHECKS)
