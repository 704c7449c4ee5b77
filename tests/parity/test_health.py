"""``/readyz`` against the real test database: ready on a laptop (tasks eager, no broker nor
worker to wait for), 503 naming the migrations a deploy has not applied yet, and a database that
does not answer is named as such. The broker and the worker: tests/e2e/test_health.py."""

import socket

import pytest
from django.db import connections
from django.db.migrations.recorder import MigrationRecorder
from prometheus_client.parser import text_string_to_metric_families

from parity.health import checks
from tests.junit_builder import Case, junit_xml

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _forget_migrated():
    checks._migrated.clear()
    yield
    checks._migrated.clear()


def test_a_laptop_with_eager_tasks_is_ready(client, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.PARITY_METRICS_TOKEN = "s3cret"
    reply = client.get("/readyz", HTTP_AUTHORIZATION="Bearer s3cret")
    assert reply.status_code == 200, reply.content
    assert reply.json() == {
        "status": "ready",
        "failed": [],
        "checks": {"database": "ok", "migrations": "ok", "broker": "eager", "worker": "eager"},
    }


def test_readyz_names_a_migration_not_applied(admin_client, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    newest = MigrationRecorder.Migration.objects.latest("id")
    newest.delete()  # as a new release sees the database before its `migrate` ran

    reply = admin_client.get("/readyz")  # a staff user's session reads the details

    assert reply.status_code == 503
    assert reply.json()["failed"] == ["migrations"]
    assert reply.json()["checks"]["migrations"] == f"1 not applied: {newest.app}.{newest.name}"


@pytest.mark.parametrize("authorization", ["", "Bearer wrong", "Token abc"])
def test_readyz_tells_anyone_only_ready_or_not_per_component(
    client, django_user_model, settings, monkeypatch, authorization
):
    settings.PARITY_METRICS_TOKEN = "s3cret"
    leaky = checks.Check(False, "unreachable: connection to server at 10.0.4.2, port 5432")
    monkeypatch.setattr(checks, "broker_check", lambda: leaky)
    monkeypatch.setattr(
        checks, "worker_check", lambda: checks.Check(True, "ok: celery@ingest-7f9c.internal")
    )
    user = django_user_model.objects.create_user("reader", password="x" * 12)  # not staff
    client.force_login(user)

    reply = client.get("/readyz", HTTP_AUTHORIZATION=authorization)

    assert reply.status_code == 503
    assert reply.json() == {
        "status": "unready",
        "failed": ["broker"],
        "checks": {"database": "ok", "migrations": "ok", "broker": "failed", "worker": "ok"},
    }
    assert b"10.0.4.2" not in reply.content and b"internal" not in reply.content
    detailed = client.get("/readyz", HTTP_AUTHORIZATION="Bearer s3cret").json()["checks"]
    assert detailed["broker"] == leaky.detail
    assert detailed["worker"] == "ok: celery@ingest-7f9c.internal"


def test_a_database_that_does_not_answer_is_named():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    default = connections["default"]
    unreachable = type(default)({**default.settings_dict, "PORT": port}, alias="default")
    try:
        result = checks.database_check(database=unreachable)
    finally:
        unreachable.close()
    assert not result.ok
    assert result.detail.startswith("unreachable: ")
    assert not checks.migrations_check(database=unreachable).ok


def test_metrics_are_off_without_a_token(client, settings):
    settings.PARITY_METRICS_TOKEN = ""
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer anything").status_code == 404


def test_metrics_answer_only_the_bearer_token(client, settings):
    settings.PARITY_METRICS_TOKEN = "s3cret"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="s3cret").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret").status_code == 200


def test_metrics_count_failed_uploads_and_recent_ingests(client, settings, ingest):
    settings.PARITY_METRICS_TOKEN = "s3cret"
    good = ingest(("good.xml", junit_xml(Case("TestOps", "test_add", "passed"))))
    bad = ingest(("bad.xml", b"<testsuite><testcase"), commit="1" * 40)
    assert (good.status_code, bad.status_code) == (202, 202)

    reply = client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret")

    assert reply["Content-Type"].startswith("text/plain; version=")
    samples = {
        f"{s.name}{dict(sorted(s.labels.items())) or ''}": s.value
        for family in text_string_to_metric_families(reply.content.decode())
        for s in family.samples
    }
    assert samples["parity_uploads{'status': 'failed'}"] == 1
    assert samples["parity_uploads{'status': 'queued'}"] == 0
    assert samples["parity_ingest_recent"] == 1
    assert samples["parity_digests_sent_total"] == 0


def test_probes_answer_a_plain_http_call_to_the_containers_own_address(client, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["parity.example.com"]
    host = {"HTTP_HOST": "10.0.0.7:8000"}  # an orchestrator probing the pod, not the site

    assert client.get("/healthz", **host).status_code == 200
    assert client.get("/readyz", **host).status_code == 200
    assert client.get("/accounts/login/", **host).status_code == 400  # the site still checks
