"""The admin's identity page and preset: a maintainer picks a preset, pastes names from two
backends and reads which join, then plans and runs a re-key, all through the served admin."""

import json
import re

from parity.models import Rekey, RekeyStatus, TestCase
from parity.pure.normalize.presets import preset_named, preset_rules
from parity.services.projects import project_rules_update
from tests.junit_builder import Case, junit_xml
from tests.parity.admin.test_projects import project_form as base_project_form

SQLA = "test.dialect.test_suite.ComponentReflectionTest"


def project_form(project, **changes) -> dict:
    # The score settings came with the variants' migration, after the base form was written.
    settings = {"score_definition": project.score_definition, "variant_keys": '["arch"]'}
    return base_project_form(project, **settings, **changes)


def identity_url(project) -> str:
    return f"/admin/parity/rekey/project/{project.pk}/"


def text(response) -> str:
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))
    return re.sub(r" ([.,;])", r"\1", words)


def test_the_project_page_links_to_identity_and_picks_a_preset(admin_client, project):
    page = admin_client.get(f"/admin/parity/project/{project.pk}/change/").content.decode()
    assert identity_url(project) in page
    assert '<option value="sqlalchemy">' in page

    form = project_form(project, identity_preset="sqlalchemy", normalization_rules="{}")
    response = admin_client.post(f"/admin/parity/project/{project.pk}/change/", form)

    assert response.status_code == 302, response.context["adminform"].form.errors
    project.refresh_from_db()
    assert project.normalization_rules == preset_rules("sqlalchemy")


def test_a_rule_without_a_backend_group_is_refused_on_the_project_form(admin_client, project):
    rules = '{"backend_pattern": {"class": "_pg$"}}'
    response = admin_client.post(
        f"/admin/parity/project/{project.pk}/change/",
        project_form(project, normalization_rules=rules),
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["normalization_rules"]
    assert "backend_pattern.class: '_pg$' has no group named 'backend'" in errors[0]
    project.refresh_from_db()
    assert project.normalization_rules == {}


def test_a_preset_loads_its_rules_and_example_names(admin_client, project):
    response = admin_client.get(identity_url(project) + "?preset=django")

    assert response.status_code == 200
    form = response.context["form"]
    assert '"backend_pattern"' in form["rules"].value()
    assert form["left"].value().splitlines() == list(preset_named("django").example[0])
    assert "Its rules are the pytorch preset." in text(response)


def test_the_preview_shows_which_names_join_under_the_edited_rules(admin_client, project):
    project_rules_update(project=project, rules=preset_rules("plain"))
    left = (
        f"{SQLA}_postgresql+psycopg2_15_20::test_get_indexes\ntest.orm.test_query.QueryTest::test_x"
    )
    right = f"{SQLA}_sqlite+pysqlite_3_45::test_get_indexes\nnot a ::"
    form = {
        "rules": '{"device_tokens": [], "class_suffixes": {}, "backend_pattern": '
        '{"class": "_(?P<backend>(?:postgresql|sqlite)\\\\+\\\\w+)$"}}',
        "left": left,
        "right": right,
        "action": "preview",
    }

    response = admin_client.post(identity_url(project), form)

    assert response.status_code == 200, response.context["form"].errors
    page = text(response)
    assert "With these rules: 1 join, 1 only in the first, 0 only in the second" in page
    assert "With the saved rules: 0 join." in page
    assert "test/dialect/test_suite.py::ComponentReflectionTest::test_get_indexes joins" in page
    assert "postgresql+psycopg2_15_20" in page and "sqlite+pysqlite_3_45" in page
    assert "right line 2" in page  # the line that names no test, and why
    project.refresh_from_db()
    assert project.normalization_rules == preset_rules("plain")  # a preview saves nothing


def test_bad_rules_in_the_preview_say_what_is_wrong(admin_client, project):
    form = {"rules": '{"backend_pattern": {"name": "(?P<backend>cuda"}}', "action": "preview"}
    response = admin_client.post(identity_url(project), form)

    assert response.status_code == 200
    assert "backend_pattern.name: invalid regular expression" in str(
        response.context["form"].errors["rules"]
    )
    form = {"rules": "{not json", "action": "plan"}
    response = admin_client.post(identity_url(project), form)
    assert "Not JSON" in str(response.context["form"].errors["rules"])
    assert not Rekey.objects.exists()


def test_plan_then_run_a_rekey_from_the_page(
    admin_client, project, ingest, django_capture_on_commit_callbacks
):
    project_rules_update(project=project, rules=preset_rules("plain"))
    for backend, database in (("cpu", "_sqlite+pysqlite_3_45"), ("gpu", "_postgresql+psycopg2")):
        report = junit_xml(Case(f"{SQLA}{database}", "test_get_indexes"))
        ingest(("r.xml", report), backend=backend, complete="true")
    rules = preset_rules("sqlalchemy")

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            identity_url(project), {"rules": json.dumps(rules), "action": "plan"}
        )
    assert response.status_code == 302
    page = text(admin_client.get(identity_url(project)))
    rekey = Rekey.objects.get()
    assert f"Re-key {rekey.pk}" in page and "planned" in page
    assert "Of 2 stored tests (2 uploads in 2 runs), 2 change key; 2 merge into 1." in page

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(identity_url(project), {"action": "run", "rekey": rekey.pk})
    rekey.refresh_from_db()
    assert rekey.status == RekeyStatus.DONE
    assert list(TestCase.objects.values_list("key", flat=True)) == [
        "test/dialect/test_suite.py::ComponentReflectionTest::test_get_indexes"
    ]
    assert "2 old test IDs removed" in text(admin_client.get(identity_url(project)))


def test_a_nul_in_the_rules_is_named_not_a_crash(admin_client, project):
    form = {"rules": '{"device_tokens": ["cu\\u0000da"]}', "action": "plan"}
    response = admin_client.post(identity_url(project), form)

    assert response.status_code == 200
    assert "NUL" in str(response.context["form"].errors["rules"])
    assert not Rekey.objects.exists()
