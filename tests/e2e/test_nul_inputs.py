"""A NUL character inside JSON or Python-literal input, through the live stack: each JSON field
of an upload and each list format that decodes one answers 400 naming where, and nothing is
stored (Postgres keeps no NUL in text or jsonb; before, each of these answered 500)."""

import json

import pytest

from parity.models import Run, Triage, Upload
from tests.e2e.generate import junit_write

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

NUL = "\\u0000"  # as JSON spells it: no NUL byte is sent

FIELDS = [
    ("attributes", '{"arch": "gfx' + NUL + '942"}'),
    ("attributes", '{"rocm": "7.1", "arch": "' + NUL + '"}'),
    ("run_manifest", '{"files": [{"file": "test/a' + NUL + '.py"}]}'),
    ("run_manifest", '{"files": [{"file": "test/a.py", "tests": ["t' + NUL + '"]}]}'),
    ("hw_classification", '{"test/a.py::T' + NUL + '": "GENERIC"}'),
    ("hw_classification", '{"test/a.py::T": "GENERIC' + NUL + '"}'),
]


@pytest.mark.parametrize(("field", "text"), FIELDS)
def test_a_nul_in_an_upload_json_field_is_a_400_naming_it(http_api, live, tmp_path, field, text):
    report = junit_write(tmp_path / "report.xml", cases=5)

    reply = http_api.post_upload(report.path, **{field: text})

    assert reply.status == 400, str(reply)
    assert list(reply.body) == [field]
    assert "NUL" in reply.body[field][0]
    assert not Upload.objects.exists() and not Run.objects.exists()


LISTS = [
    (
        "disabled-json",
        '{"test_a (__main__.TestA)": ["1", "https://github.com/o/r/issues/1", ["linux'
        + NUL
        + '"]]}',
    ),
    ("disabled-json", '{"test_a (__main__.TestA)": ["1' + NUL + '", "https://x.org/1", []]}'),
    ("skip-dict", 'skip_dict = {"test_a.py": ("case\\x00",)}\n'),
    ("skip-dict", 'skip_dict = {"test_\\x00a.py": None}\n'),
]


@pytest.mark.parametrize(("list_format", "content"), LISTS)
def test_a_nul_in_an_imported_list_is_a_400(http_api, live, list_format, content):
    body = json.dumps({"format": list_format, "content": content}).encode()

    reply = http_api.request(
        "POST",
        "/api/v1/projects/pytorch-xla/exemptions/import/",
        body=body,
        headers={"Content-Type": "application/json"},
    )

    assert reply.status == 400, str(reply)
    assert "NUL" in reply.body["detail"]
    assert not Triage.objects.exists()
