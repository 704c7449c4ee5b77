"""Per-project normalization rules: validated when written (the admin's form, import_rules), used by
ingest."""

from pathlib import Path

import pytest
from django.contrib.admin.sites import site
from django.core.management import CommandError, call_command

from parity.models import Project, Reason, TestCase
from tests.conftest import FIXTURES_DIR
from tests.junit_builder import Case, junit_xml


def test_the_admin_form_shows_the_rule_error(admin_client, project):
    url = f"/admin/parity/project/{project.pk}/change/"
    form = admin_client.get(url).context["adminform"].form
    data = {**form.initial, "normalization_rules": '{"device_tokens": 3}'}
    data = {k: ("" if v is None else v) for k, v in data.items()}
    data.update({"backends-TOTAL_FORMS": "0", "backends-INITIAL_FORMS": "0"})

    response = admin_client.post(url, data)

    assert response.status_code == 200  # the form again, not a redirect
    errors = response.context["adminform"].form.errors
    assert "device_tokens" in errors["normalization_rules"][0]
    assert site.is_registered(Project)


def test_import_rules_from_yaml_then_ingest_uses_them(project, ingest):
    call_command("import_rules", project.slug, FIXTURES_DIR / "normalize" / "rules_example.yaml")
    xml = junit_xml(Case("TestSharding", "test_mesh", file="test/test_xla_sharding_old.py"))

    ingest(("shard.xml", xml))

    assert list(TestCase.objects.values_list("key", flat=True)) == [
        "test/spmd/test_xla_sharding.py::TestSharding::test_mesh"
    ]


def test_import_rules_refuses_a_bad_file_and_keeps_the_old_rules(project, tmp_path: Path):
    bad = tmp_path / "rules.json"
    bad.write_text('{"rewrites": [{"pattern": "[", "replacement": ""}]}')

    with pytest.raises(CommandError, match=r"rewrites\[0\]\.pattern"):
        call_command("import_rules", project.slug, bad)

    project.refresh_from_db()
    assert project.normalization_rules == {}


def test_reasons_link_their_issues_and_spellings_share_one_reason(project, ingest):
    xml = junit_xml(
        Case(
            "TestA",
            "test_1",
            "skipped",
            "test/test_a.py:12: Skipped: Fails on TPU, see #6023",
            file="test/test_a.py",
        ),
        Case("TestA", "test_2", "skipped", "Fails on TPU, see #6023", file="test/test_a.py"),
        Case(
            "TestA",
            "test_3",
            "skipped",
            "https://github.com/pytorch/pytorch/issues/155632",
            file="test/test_a.py",
        ),
        Case("TestA", "test_4", "skipped", "Multiple devices required", file="test/test_a.py"),
    )

    ingest(("a.xml", xml), backend="tpu")

    reasons = {r.text: sorted(i.url for i in r.issues.all()) for r in Reason.objects.all()}
    assert reasons == {
        "Fails on TPU, see #6023": ["https://github.com/pytorch/xla/issues/6023"],
        "https://github.com/pytorch/pytorch/issues/155632": [
            "https://github.com/pytorch/pytorch/issues/155632"
        ],
        "Multiple devices required": [],
    }
