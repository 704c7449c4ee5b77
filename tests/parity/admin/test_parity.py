"""The admin for the engine's tables: triage edits go through the engine, the rest is read-only."""

import psycopg2
import pytest
from django.db import OperationalError, connection

from parity.models import Gap, Run, TestCase, TrackingIssue, Triage
from parity.pure.run_manifest import FileRun
from parity.services.projects import project_create
from tests.parity.engine.test_absent_states import manifest_write

A = "test/a.py::TestA::"


@pytest.fixture
def gap(upload_run) -> Gap:
    upload_run("cpu", {f"{A}test_1": "passed"}, day="2026-04-01")
    upload_run("tpu", {f"{A}test_1": ("skipped", "later")}, day="2026-04-01")
    return Gap.objects.get()


@pytest.mark.parametrize("model", ["triage", "gap", "snapshot", "runfile"])
def test_changelists_load(admin_client, gap, model):
    assert admin_client.get(f"/admin/parity/{model}/").status_code == 200


def test_a_run_manifest_is_listed_with_how_each_file_ended(admin_client, gap):
    manifest_write(Run.objects.get(backend=gap.backend), FileRun("test/b.py", signal="SIGSEGV"))

    response = admin_client.get("/admin/parity/runfile/?q=test/b.py")

    assert response.status_code == 200
    assert b"SIGSEGV" in response.content
    assert admin_client.get("/admin/parity/runfile/add/").status_code == 403


def test_derived_rows_cannot_be_edited(admin_client, gap):
    assert admin_client.get("/admin/parity/gap/add/").status_code == 403


def test_a_triage_added_in_the_admin_applies_at_once(admin_client, gap, xla):
    form = {
        "project": xla.pk,
        "backend": gap.backend_id,
        "test": gap.test_id,
        "kind": "intended",
        "note": "by design",
    }

    response = admin_client.post("/admin/parity/triage/add/", form)

    assert response.status_code == 302, response.context["adminform"].form.errors
    gap.refresh_from_db()
    assert (gap.intended, gap.triage_id) == (True, Triage.objects.get().pk)


def test_the_admin_refuses_a_tracked_triage_without_an_issue(admin_client, gap, xla):
    form = {"project": xla.pk, "test": gap.test_id, "kind": "tracked"}

    response = admin_client.post("/admin/parity/triage/add/", form)

    assert response.status_code == 200
    assert "issue" in response.context["adminform"].form.errors
    assert not Triage.objects.exists()


def test_the_admin_refuses_a_backend_of_another_project(admin_client, gap, xla):
    other = project_create(slug="jax", backends=["cpu", "tpu"], reference="cpu")
    form = {
        "project": xla.pk,
        "backends": [other.backends.get(name="tpu").pk],
        "test": gap.test_id,
        "kind": "intended",
        "note": "by design",
    }

    response = admin_client.post("/admin/parity/triage/add/", form)

    assert response.status_code == 200
    assert "backends" in response.context["adminform"].form.errors
    assert not Triage.objects.exists()


def test_admin_changes_and_deletes_of_a_triage_apply_at_once(admin_client, gap, xla):
    issue = TrackingIssue.objects.create(project=xla, kind="github", key="pytorch/xla#1")
    triage = Triage.objects.create(project=xla, test=gap.test, kind="intended", note="x")
    admin_client.post(
        f"/admin/parity/triage/{triage.pk}/change/",
        {"backend": "", "test": gap.test_id, "kind": "tracked", "issue": issue.pk, "note": ""},
    )
    gap.refresh_from_db()
    assert (gap.tracked, gap.intended, gap.triage_id) == (True, False, triage.pk)

    admin_client.post(f"/admin/parity/triage/{triage.pk}/delete/", {"post": "yes"})
    gap.refresh_from_db()
    assert not Triage.objects.exists() and (gap.tracked, gap.triage_id) == (False, None)

    again = Triage.objects.create(project=xla, test=gap.test, kind="intended", note="x")
    admin_client.post(
        "/admin/parity/triage/",
        {"action": "delete_selected", "_selected_action": [again.pk], "post": "yes"},
    )
    gap.refresh_from_db()
    assert not Triage.objects.exists() and (gap.intended, gap.triage_id) == (False, None)


@pytest.mark.django_db(transaction=True)
def test_an_admin_triage_waits_for_the_project_lock(admin_client, project):
    """Triage and the engine's recompute of a project take turns on its row lock; the admin's
    triage too (it used to write without it)."""
    test = TestCase.objects.create(project=project, key="a.py::A::t1", file="a.py", name="t1")
    form = {"project": project.pk, "test": test.pk, "kind": "intended", "note": "by design"}
    holder = psycopg2.connect(**connection.get_connection_params())  # a recompute, say
    try:
        with holder.cursor() as cursor:
            cursor.execute(
                "SELECT 1 FROM parity_project WHERE id = %s FOR NO KEY UPDATE", [project.pk]
            )
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '300ms'")
        with pytest.raises(OperationalError, match="lock timeout"):
            admin_client.post("/admin/parity/triage/add/", form)
        assert not Triage.objects.exists()
    finally:
        holder.rollback()
        holder.close()
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")

    assert admin_client.post("/admin/parity/triage/add/", form).status_code == 302
    assert Triage.objects.get().created_by.is_superuser


def test_tracking_issues_list_what_their_tracker_said_and_the_sync_fields_stay_read_only(
    admin_client, xla
):
    issue = TrackingIssue.objects.create(
        project=xla,
        kind="github",
        key="pytorch/xla#9017",
        url="https://github.com/pytorch/xla/issues/9017",
        state="closed",
        title="XLA does not support complex64",
    )

    listed = admin_client.get("/admin/parity/trackingissue/?state=closed").content.decode()
    assert "XLA does not support complex64" in listed
    form = admin_client.get(f"/admin/parity/trackingissue/{issue.pk}/change/").content.decode()
    assert 'name="title"' not in form and 'name="state"' not in form
    assert 'name="url"' in form


def test_an_issue_linked_to_a_reason_in_the_admin_tracks_its_gaps_at_once(admin_client, gap, xla):
    issue = TrackingIssue.objects.create(
        project=xla,
        kind="github",
        key="pytorch/xla#5",
        url="https://github.com/pytorch/xla/issues/5",
    )
    reason = gap.reason
    form = {
        "project": xla.pk,
        "kind": reason.kind,
        "text": reason.text,
        "fingerprint": reason.fingerprint,
        "first_seen_0": "2026-04-01",
        "first_seen_1": "12:00:00",
        "last_seen_0": "2026-04-01",
        "last_seen_1": "12:00:00",
        "issues": [issue.pk],
    }

    response = admin_client.post(f"/admin/parity/reason/{reason.pk}/change/", form)

    assert response.status_code == 302, response.context["adminform"].form.errors
    gap.refresh_from_db()
    assert gap.tracked and list(reason.issues.all()) == [issue]

    form["issues"] = []
    assert admin_client.post(f"/admin/parity/reason/{reason.pk}/change/", form).status_code == 302
    gap.refresh_from_db()
    assert not gap.tracked
