"""docs/identity.md's worked example does what the page says: its rules, read from the page,
join SQLAlchemy's per-database classes of two backends into one test through the upload API,
`import_rules` and `reingest`, and the pytest plugin's node IDs resolve to that test."""

import re
from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from parity.models import Result, TestCase
from parity.pure.normalize.runner_ids import runner_identity
from parity.services.projects import project_create, upload_token_create
from tests.junit_builder import Case, junit_xml
from tests.uploads import post_upload

PAGE = Path(__file__).resolve().parents[2] / "docs" / "identity.md"
JOINED = "test/dialect/test_suite.py::ComponentReflectionTest::test_get_multi_columns"
CLASSES = {
    "postgres": "ComponentReflectionTest_postgresql+psycopg2_15_20",
    "sqlite": "ComponentReflectionTest_sqlite+pysqlite_3_45",
}


def example_rules(tmp_path: Path) -> Path:
    """The worked example's `rules.json`, as the page shows it."""
    example = PAGE.read_text(encoding="utf-8").split("## Worked example", 1)[1]
    block = re.search(r"^```json\n(.*?)^```", example, re.M | re.S)
    assert block, "docs/identity.md's worked example has no ```json block"
    path = tmp_path / "rules.json"
    path.write_text(block.group(1))
    return path


@pytest.mark.django_db
def test_the_worked_example_joins_both_backends_classes_into_one_test(
    tmp_path, django_capture_on_commit_callbacks
):
    project = project_create(slug="sqlalchemy", backends=["sqlite", "postgres"], reference="sqlite")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {upload_token_create(project=project)}")
    for backend, class_name in CLASSES.items():
        # pytest's default JUnit: a dotted classname, no file=.
        xml = junit_xml(Case(f"test.dialect.test_suite.{class_name}", "test_get_multi_columns"))
        report = (f"{backend}.xml", xml)
        with django_capture_on_commit_callbacks(execute=True):
            answer = post_upload(api, report, project=project.slug, backend=backend)
        assert answer.status_code == 202, answer.content
    assert TestCase.objects.count() == 2  # without rules, one test per backend

    call_command("import_rules", "sqlalchemy", example_rules(tmp_path))
    call_command("reingest", "sqlalchemy")

    assert list(TestCase.objects.values_list("key", flat=True)) == [JOINED]
    backends = Result.objects.filter(test__key=JOINED).values_list("run__backend__name", flat=True)
    assert sorted(backends) == ["postgres", "sqlite"]
    project.refresh_from_db()
    rules = project.normalization()
    for class_name in CLASSES.values():
        node_id = f"test/dialect/test_suite.py::{class_name}::test_get_multi_columns"
        assert runner_identity(node_id, rules).key == JOINED
