"""A NUL character inside an upload's JSON fields (``"\\u0000"`` decodes to one; Postgres stores
none in text or jsonb) is a 400 naming the field, and nothing is stored."""

import json

import pytest

from parity.models import Run, Upload
from tests.conftest import FIXTURES_DIR

PYTEST_SMALL = FIXTURES_DIR / "junit" / "pytest_small.xml"
NUL = "\\u0000"  # as JSON spells it: the request itself holds no NUL byte


@pytest.mark.parametrize(
    ("field", "text", "where"),
    [
        ("attributes", '{"arch": "gfx' + NUL + '942"}', "at arch"),
        ("run_manifest", '{"files": [{"file": "test/a' + NUL + '.py"}]}', "files[0].file"),
        (
            "run_manifest",
            '{"files": [{"file": "test/a.py", "tests": ["t' + NUL + '"]}]}',
            "files[0].tests[0]",
        ),
        ("hw_classification", '{"test/a.py::T' + NUL + '": "GENERIC"}', "(a key)"),
        ("hw_classification", '{"test/a.py::T": "GENE' + NUL + 'RIC"}', "test/a.py::T"),
    ],
)
def test_a_nul_in_a_json_field_is_a_400_naming_it(ingest, field, text, where):
    json.loads(text)  # valid JSON: the NUL is the only fault

    response = ingest(PYTEST_SMALL, **{field: text})

    assert response.status_code == 400, response.content
    [message] = response.json()[field]
    assert "NUL" in message and where in message
    assert not Upload.objects.exists()
    assert not Run.objects.exists()
