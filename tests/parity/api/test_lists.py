"""The lists API: a maintainer imports a team's list and reads the report; anyone who reads
the project downloads its exemptions in that list's format, as it went in."""

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from parity.models import Membership, Triage

LISTS = Path(__file__).resolve().parents[2] / "fixtures" / "lists"
URL = "/api/v1/projects/pytorch-xla/exemptions"


@pytest.fixture
def maintainer(project) -> APIClient:
    user = get_user_model().objects.create_user("maintainer", password="x" * 12)
    Membership.objects.create(user=user, project=project, role="maintainer")
    client = APIClient()
    client.force_login(user)
    return client


def sheet(**fields) -> dict:
    text = (LISTS / "parity-sheet.csv").read_text()
    return {"format": "amd-csv", "content": text, "backends": ["gpu"], **fields}


def test_a_maintainer_imports_a_sheet_and_gets_its_report(maintainer):
    dry = maintainer.post(f"{URL}/import/", sheet(dry_run=True), format="json")
    assert dry.status_code == 200, dry.content
    assert not Triage.objects.exists()

    response = maintainer.post(f"{URL}/import/", sheet(), format="json")

    assert response.status_code == 200, response.content
    report = response.json()
    assert {k: report[k] for k in ("source", "created", "updated", "not_imported")} == {
        "source": "import:amd-csv",
        "created": 3,
        "updated": 0,
        "not_imported": 0,
    }
    assert report["matched"] == []  # the project has stored none of these tests
    assert [(u["where"], u["why"]) for u in report["unmatched"]] == [
        ("line 2", "matches no stored test"),
        ("line 3", "matches no stored test"),
        ("line 4", "matches no stored test"),
    ]
    assert {t.created_by.username for t in Triage.objects.all()} == {"maintainer"}
    again = maintainer.post(f"{URL}/import/", sheet(), format="json").json()
    assert (again["created"], again["unchanged"]) == (0, 3)


def test_only_maintainers_import(project):
    reader = APIClient()
    reader.force_login(get_user_model().objects.create_user("reader", password="x" * 12))

    assert reader.post(f"{URL}/import/", sheet(), format="json").status_code == 403
    assert APIClient().post(f"{URL}/import/", sheet(), format="json").status_code == 401
    assert not Triage.objects.exists()


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"content": "file,reason\n"}, "No test_name column in the header."),
        ({"backends": ["ipu"]}, "Unknown backend 'ipu' (known: cpu, gpu, neuron, tpu)."),
        ({"format": "skip-dict", "content": "skip_dict = {\n"}, "Not Python: line 1"),
        ({"condition": "arch =="}, "Condition 'arch =='"),
    ],
)
def test_a_file_that_cannot_be_imported_is_refused_with_why(maintainer, fields, says):
    response = maintainer.post(f"{URL}/import/", sheet(**fields), format="json")

    assert response.status_code == 400
    assert says in response.json()["detail"]
    assert not Triage.objects.exists()


def test_an_export_is_a_download_in_the_lists_format(maintainer):
    maintainer.post(f"{URL}/import/", sheet(), format="json")
    anyone = APIClient()  # a public project: anyone reads it

    response = anyone.get(f"{URL}/export/amd-csv/", {"source": "import:amd-csv"})

    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="parity.csv"'
    assert response.content.decode() == (LISTS / "parity-sheet.csv").read_text()
    deselect = anyone.get(f"{URL}/export/deselect/", {"backend": "gpu", "kind": "tracked"})
    assert deselect["Content-Type"] == "text/plain; charset=utf-8"
    assert deselect.content.decode() == (
        "test/test_ops.py::TestCommon::test_out_warning_addmm"
        "  # https://github.com/ROCm/pytorch/issues/9100\n"
    )
    assert anyone.get(f"{URL}/export/deselect/", {"backend": "tpu"}).content == b""


def test_an_unknown_format_or_filter_is_named(project):
    response = APIClient().get(f"{URL}/export/excel/")
    assert response.status_code == 404
    assert "No list format 'excel'" in response.json()["detail"]
    assert APIClient().get(f"{URL}/export/yaml/", {"kind": "nope"}).status_code == 400


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        (
            {
                "format": "disabled-json",
                "content": '{"test_a (__main__.TestA)": '
                '["1", "https://github.com/o/r/issues/1", ["rocm\\u0000"]]}',
            },
            "NUL",
        ),
        (
            {
                "format": "disabled-json",
                "content": '{"test_a (__main__.TestA)": '
                '["1\\u0000", "https://github.com/o/r/issues/1", []]}',
            },
            "extra.issue_number",
        ),
        (
            {"format": "skip-dict", "content": 'skip_dict = {"test_a.py": ("case\\x00",)}\n'},
            "NUL",
        ),
    ],
)
def test_a_nul_in_an_imported_list_is_refused_and_nothing_changes(
    maintainer, project, fields, says
):
    before = maintainer.post(f"{URL}/import/", sheet(), format="json")
    assert before.status_code == 200

    response = maintainer.post(f"{URL}/import/", sheet(backends=[], **fields), format="json")

    assert response.status_code == 400, response.content
    assert says in response.json()["detail"]
    assert Triage.objects.count() == 3  # the earlier import is kept, nothing new written
