"""The admin for the engine's tables: triage edits go through the engine, the rest is read-only."""

import pytest

from parity.models import Gap, Triage

A = "test/a.py::TestA::"


@pytest.fixture
def gap(upload_run) -> Gap:
    upload_run("cpu", {f"{A}test_1": "passed"}, day="2026-04-01")
    upload_run("tpu", {f"{A}test_1": ("skipped", "later")}, day="2026-04-01")
    return Gap.objects.get()


@pytest.mark.parametrize("model", ["triage", "gap", "snapshot"])
def test_changelists_load(admin_client, gap, model):
    assert admin_client.get(f"/admin/parity/{model}/").status_code == 200


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
