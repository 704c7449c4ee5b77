"""Webhooks through the real pipeline: uploads through the API, eager Celery running the
ingest, the recompute and the delivery tasks, and a local receiver that checks every
signature (``tests/webhook_receiver.py``)."""

import datetime
import hashlib
import json

import pytest
from cryptography.fernet import Fernet
from django.db import connection
from django.utils import timezone

from parity import tasks
from parity.digest.tasks import digest_ready_announce
from parity.models import (
    Gap,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookNotice,
)
from parity.pure.weeks import Week
from tests.parity.conftest import commit_of, run_xml
from tests.webhook_receiver import WebhookReceiver

A = "test/a.py::TestA::test_a"
B = "test/a.py::TestA::test_b"
REFERENCE = {A: "passed", B: "passed"}
TPU_SKIPS_B = {A: "passed", B: ("skipped", "not on tpu yet")}


@pytest.fixture
def receiver():
    with WebhookReceiver() as receiver:
        yield receiver


@pytest.fixture
def endpoint(xla, receiver):
    def _endpoint(**fields) -> WebhookEndpoint:
        made = WebhookEndpoint.objects.create(project=xla, url=receiver.url, **fields)
        receiver.secret = made.secret
        return made

    return _endpoint


def attempts(endpoint: WebhookEndpoint) -> list[tuple]:
    rows = WebhookAttempt.objects.filter(delivery__endpoint=endpoint).order_by("pk")
    return [(a.number, a.status_code, a.next_retry_at is not None, a.error) for a in rows]


def test_an_upload_opening_an_untracked_gap_reaches_the_receiver_signed(
    endpoint, receiver, upload_run
):
    hook = endpoint()
    upload_run("cpu", REFERENCE, day="2026-04-01")
    assert receiver.received == []  # the reference alone opens no gap
    run = upload_run("tpu", TPU_SKIPS_B, day="2026-04-01")
    [got] = receiver.received
    assert got.verified, got.why
    assert got.headers["X-Parity-Event"] == "untracked_gaps"
    body = got.body
    assert body["event"] == "untracked_gaps" and body["project"] == "pytorch-xla"
    data = body["data"]
    assert (data["backend"], data["run"]["id"]) == ("tpu", run)
    assert (data["opened_total"], data["closed_total"]) == (1, 0)
    [gap] = data["opened"]
    assert (gap["test"], gap["state"], gap["reason"]) == (B, "skipped", "not on tpu yet")
    test_id = Gap.objects.get(backend__name="tpu").test_id
    assert gap["url"] == f"http://127.0.0.1:8000/p/pytorch-xla/tests/{test_id}/"
    # The log holds the attempt, with the digest of the exact bytes received.
    [log] = WebhookAttempt.objects.filter(delivery__endpoint=hook)
    assert (log.number, log.status_code, log.error) == (1, 200, "")
    assert log.body_sha256 == hashlib.sha256(got.raw).hexdigest()
    assert log.delivery.status == "delivered" and log.delivered_at is not None

    # The next night tpu runs test_b: the gap closes, and one event says so.
    upload_run("tpu", REFERENCE, day="2026-04-02")
    closing = receiver.received[1].body["data"]
    assert (closing["opened_total"], closing["closed_total"]) == (0, 1)
    assert closing["closed"][0]["test"] == B
    assert len(receiver.received) == 2


def test_one_event_per_recompute_and_backend_lists_every_gap(endpoint, receiver, upload_run):
    endpoint()
    tests = {f"test/b.py::TestB::test_{n}": "passed" for n in range(150)}
    upload_run("cpu", tests, day="2026-04-01")
    upload_run("tpu", dict.fromkeys(tests, ("failed", "boom")), day="2026-04-01")
    [got] = receiver.received
    data = got.body["data"]
    assert data["opened_total"] == 150
    assert len(data["opened"]) == 100  # listed up to ITEMS_MAX; the total counts them all


def test_a_tracked_gap_is_not_announced(endpoint, receiver, upload_run, api):
    endpoint()
    upload_run("cpu", REFERENCE, day="2026-04-01")
    response = api.post(
        "/api/v1/projects/pytorch-xla/triage/",
        {"match": B, "kind": "intended", "backends": ["tpu"], "note": "by design"},
        format="json",
    )
    assert response.status_code == 201, response.content
    upload_run("tpu", TPU_SKIPS_B, day="2026-04-01")
    assert receiver.received == []


def test_a_late_shard_announces_only_what_it_changed(endpoint, receiver, upload_run):
    endpoint()
    C = "test/c.py::TestC::test_c"
    upload_run("cpu", {**REFERENCE, C: "passed"}, day="2026-04-01")
    upload_run("tpu", TPU_SKIPS_B, day="2026-04-01", run="tpu-night", name="one.xml")
    upload_run("tpu", {C: "passed"}, day="2026-04-01", run="tpu-night", name="two.xml")
    first, second = (r.body["data"] for r in receiver.received)
    assert [(g["test"], g["state"]) for g in first["opened"]] == [(B, "skipped"), (C, "missing")]
    assert (second["opened"], [g["test"] for g in second["closed"]]) == ([], [C])
    assert first["run"] == second["run"]


def test_a_failing_receiver_is_retried_with_backoff_and_each_attempt_logged(
    endpoint, receiver, upload_run, settings
):
    hook = endpoint()
    upload_run("cpu", REFERENCE, day="2026-04-01")
    receiver.script(500)
    upload_run("tpu", TPU_SKIPS_B, day="2026-04-01")
    assert [r.status for r in receiver.received] == [500]
    delivery = WebhookDelivery.objects.get(endpoint=hook)
    assert delivery.status == "pending"
    wait = (delivery.next_attempt_at - timezone.now()).total_seconds()
    assert 25 < wait <= settings.PARITY_WEBHOOK_RETRY_SECONDS
    tasks.webhooks_retry.delay()  # the sweep: not due yet, nothing sent
    assert len(receiver.received) == 1

    # Half a minute later the sweep sends it again: the same body, answered 200.
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    tasks.webhooks_retry.delay()
    first, second = receiver.received
    assert second.status == 200 and second.raw == first.raw
    assert second.headers["X-Parity-Delivery"] == first.headers["X-Parity-Delivery"]
    assert attempts(hook) == [(1, 500, True, "HTTP 500 Internal Server Error"), (2, 200, False, "")]
    delivery.refresh_from_db()
    assert delivery.status == "delivered"


def test_a_retry_due_soon_is_queued_by_the_delivery_task_itself(
    endpoint, receiver, upload_run, settings
):
    settings.PARITY_WEBHOOK_RETRY_SECONDS = 0
    hook = endpoint()
    upload_run("cpu", REFERENCE, day="2026-04-01")
    receiver.script(503, 429)
    upload_run("tpu", TPU_SKIPS_B, day="2026-04-01")
    assert [r.status for r in receiver.received] == [503, 429, 200]
    assert [a[:2] for a in attempts(hook)] == [(1, 503), (2, 429), (3, 200)]


def test_a_refusal_is_not_retried(endpoint, receiver, upload_run, settings):
    settings.PARITY_WEBHOOK_RETRY_SECONDS = 0
    hook = endpoint()
    upload_run("cpu", REFERENCE, day="2026-04-01")
    receiver.script(404)
    upload_run("tpu", TPU_SKIPS_B, day="2026-04-01")
    assert [r.status for r in receiver.received] == [404]
    assert WebhookDelivery.objects.get(endpoint=hook).status == "failed"


def test_a_receiver_that_is_down_never_stops_the_recompute(xla, upload_run, settings):
    with WebhookReceiver() as gone:
        url = gone.url  # a port nobody listens on once it closes
    hook = WebhookEndpoint.objects.create(project=xla, url=url)
    upload_run("cpu", REFERENCE, day="2026-04-01")
    upload_run("tpu", TPU_SKIPS_B, day="2026-04-01")
    assert Gap.objects.filter(backend__name="tpu", is_open=True).count() == 1
    [(number, status, retry, error)] = attempts(hook)
    assert (number, status, retry) == (1, None, True)
    assert "Connection refused" in error or "ConnectionRefused" in error
    # After the last attempt the delivery fails for good.
    for _ in range(settings.PARITY_WEBHOOK_MAX_ATTEMPTS - 1):
        WebhookDelivery.objects.update(next_attempt_at=timezone.now())
        tasks.webhooks_retry.delay()
    delivery = WebhookDelivery.objects.get(endpoint=hook)
    assert (delivery.status, delivery.attempts) == ("failed", settings.PARITY_WEBHOOK_MAX_ATTEMPTS)
    assert [a[2] for a in attempts(hook)] == [True, True, True, True, False]


def test_the_database_holds_ciphertext_and_the_receiver_verifies_with_the_plain_secret(
    endpoint, receiver, upload_run
):
    hook = endpoint()
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM parity_webhookendpoint WHERE id = %s", [hook.pk])
        [stored] = cursor.fetchone()
    assert hook.secret not in stored  # a dump of the table cannot sign a delivery
    upload_run("cpu", REFERENCE, day="2026-04-01")
    upload_run("tpu", TPU_SKIPS_B, day="2026-04-01")
    [got] = receiver.received
    assert got.verified, got.why  # signed with the plain secret the receiver was given


def test_a_secret_no_key_opens_fails_its_delivery_saying_what_to_do(
    endpoint, receiver, upload_run, settings, caplog
):
    settings.PARITY_SECRETS_KEYS = [Fernet.generate_key().decode()]
    hook = endpoint()
    upload_run("cpu", REFERENCE, day="2026-04-01")
    # The keys changed without the old one listed: the secret cannot be read.
    settings.PARITY_SECRETS_KEYS = [Fernet.generate_key().decode()]
    upload_run("tpu", TPU_SKIPS_B, day="2026-04-01")
    assert Gap.objects.filter(backend__name="tpu", is_open=True).count() == 1
    assert receiver.received == []  # nothing sent unsigned, or signed with another secret
    delivery = WebhookDelivery.objects.get(endpoint=hook)
    assert (delivery.status, delivery.attempts) == ("failed", 1)
    [(_, status, retry, error)] = attempts(hook)
    assert (status, retry) == (None, False)
    # The URL is encrypted with the same keys (a Slack URL is a credential): it is unreadable
    # too, so the endpoint is named by its id.
    assert f"webhook endpoint {hook.pk} (" in error and receiver.url not in error
    assert "List the old key in PARITY_SECRETS_KEYS" in error
    [logged] = [r for r in caplog.records if r.name == "parity.services.webhooks"]
    assert logged.levelname == "ERROR" and error in logged.getMessage()


def test_a_slack_endpoint_gets_slacks_shape_signed_too(endpoint, receiver, upload_run):
    endpoint(format="slack")
    upload_run("cpu", REFERENCE, day="2026-04-01")
    run = upload_run("tpu", TPU_SKIPS_B, day="2026-04-01")
    [got] = receiver.received
    assert got.verified, got.why
    message = got.body
    assert set(message) == {"text", "blocks"}
    assert message["text"] == f"pytorch-xla tpu: 1 untracked gap opened, 0 closed by run {run}"
    assert all(block["type"] == "section" for block in message["blocks"])
    assert f"/runs/{run}/|" in message["blocks"][0]["text"]["text"]
    assert "• <http://127.0.0.1:8000/p/pytorch-xla/tests/" in message["blocks"][1]["text"]["text"]


def test_nothing_is_recorded_or_sent_without_an_active_endpoint(
    xla, endpoint, receiver, upload_run
):
    endpoint(active=False)
    upload_run("cpu", REFERENCE, day="2026-04-01")
    upload_run("tpu", TPU_SKIPS_B, day="2026-04-01")
    assert receiver.received == []
    assert not WebhookNotice.objects.exists()


def test_an_endpoint_receives_only_the_events_it_subscribes_to(endpoint, receiver, upload_run):
    endpoint(events=["coverage_drop"])
    upload_run("cpu", REFERENCE, day="2026-04-01")
    upload_run("tpu", TPU_SKIPS_B, day="2026-04-01")
    assert receiver.received == []


def test_a_coverage_drop_is_announced_once(endpoint, receiver, upload_run):
    endpoint(events=["coverage_drop"])
    tests = {f"test/b.py::TestB::test_{n}": "passed" for n in range(20)}
    upload_run("cpu", tests, day="2026-04-01")
    upload_run("tpu", tests, day="2026-04-01")
    run = upload_run("tpu", dict(list(tests.items())[:5]), day="2026-04-02")
    [got] = receiver.received
    data = got.body["data"]
    assert got.body["event"] == "coverage_drop"
    assert (data["run"]["id"], data["previous_test_count"], data["test_count"]) == (run, 20, 5)
    tasks.run_completed.delay(run)  # a retried recompute: no second announcement
    assert len(receiver.received) == 1


def test_a_crashed_shard_is_no_coverage_drop_to_announce(endpoint, receiver, upload_run, ingest):
    endpoint(events=["coverage_drop"])
    ran = {f"test/b.py::TestB::test_{n}": "passed" for n in range(20)}
    crashed = {f"test/c.py::TestC::test_{n}": "passed" for n in range(20)}
    upload_run("cpu", {**ran, **crashed}, day="2026-04-01")
    upload_run("tpu", {**ran, **crashed}, day="2026-04-01")
    # Half the tests, all of them in the file that crashed: a rerun, not lost coverage.
    files = [
        {"file": "test/b.py", "exit_code": 0, "report": True, "tests": 20},
        {"file": "test/c.py", "signal": "SIGSEGV"},
    ]
    response = ingest(
        ("r.xml", run_xml(ran)),
        backend="tpu",
        commit=commit_of("2026-04-02"),
        branch="master",
        run="tpu-2026-04-02",
        complete="true",
        timestamp="2026-04-02T12:00:00Z",
        run_manifest=json.dumps({"files": files}),
    )
    assert response.status_code == 202, response.content
    assert receiver.received == []


def test_an_exemption_passing_in_a_probe_is_announced_once(
    endpoint, receiver, upload_run, api, ingest
):
    endpoint(events=["exemption_passes_now"])
    upload_run("cpu", REFERENCE, day="2026-04-01")
    upload_run("tpu", TPU_SKIPS_B, day="2026-04-01")
    response = api.post(
        "/api/v1/projects/pytorch-xla/triage/",
        {"match": B, "kind": "intended", "backends": ["tpu"], "note": "until the fix"},
        format="json",
    )
    assert response.status_code == 201, response.content

    def probe(day: str) -> int:
        reply = ingest(
            ("probe.xml", run_xml(REFERENCE)),
            backend="tpu",
            commit=commit_of(day, "master"),
            branch="master",
            run=f"{day}-probe",
            complete="true",
            timestamp=f"{day}T12:00:00Z",
            probe="true",
        )
        assert reply.status_code in (200, 202), reply.content
        return reply.json()["run"]

    run = probe("2026-04-02")
    [got] = receiver.received
    data = got.body["data"]
    assert (got.body["event"], data["run"]["id"], data["backend"]) == (
        "exemption_passes_now",
        run,
        "tpu",
    )
    assert [e["match"] for e in data["exemptions"]] == [B]
    probe("2026-04-03")  # still passes: said already
    assert len(receiver.received) == 1


def test_exemptions_expiring_soon_are_announced_once_per_expiry_day(
    xla, endpoint, receiver, api, django_capture_on_commit_callbacks
):
    endpoint(events=["exemption_expiring"])
    soon = timezone.now().date() + datetime.timedelta(days=3)
    later = timezone.now().date() + datetime.timedelta(days=30)
    for match, expires in ((A, soon), (B, later)):
        response = api.post(
            "/api/v1/projects/pytorch-xla/triage/",
            {"match": match, "kind": "intended", "note": "for now", "expires_on": str(expires)},
            format="json",
        )
        assert response.status_code == 201, response.content
    for _ in range(2):  # the beat's next tick says nothing new
        with django_capture_on_commit_callbacks(execute=True):
            tasks.triages_expire.delay()
    [got] = receiver.received
    assert [(e["match"], e["expires_on"]) for e in got.body["data"]["exemptions"]] == [
        (A, soon.isoformat())
    ]


def test_the_digest_ready_event_is_sent_once_per_week(
    xla, endpoint, receiver, django_capture_on_commit_callbacks
):
    endpoint()
    week = Week.parse("2026-W14")
    for _ in range(2):  # a second beat, a redelivered task
        with django_capture_on_commit_callbacks(execute=True):
            digest_ready_announce(week)
    [got] = receiver.received
    assert got.body["event"] == "digest_ready"
    assert got.body["data"]["url"].endswith("/p/pytorch-xla/digest/?week=2026-W14")


def test_a_version_transition_is_announced_once(xla, endpoint, receiver, ingest):
    from tests.parity.transitions_scenario import expected, history, upgrade_upload

    endpoint(events=["transition"])
    runs = history()
    uploaded = upgrade_upload(xla, ingest, runs)
    [got] = receiver.received
    assert got.verified, got.why
    assert got.headers["X-Parity-Event"] == "transition"
    data = got.body["data"]
    assert (data["backend"], data["run"]["id"], data["from_run"]) == (
        "rocm-gfx942",
        uploaded["day3"].pk,
        uploaded["day2"].pk,
    )
    assert data["changed"] == {"rocm": ["7.1", "7.14"]}
    truth = expected(runs["day2"], runs["day3"])
    assert data["counts"] == {kind: len(tests) for kind, tests in truth.items()}
    assert data["url"].endswith(f"/p/pytorch-xla/transitions/{data['transition']}/")
    assert got.body["title"].startswith("pytorch-xla rocm-gfx942: rocm 7.1 → 7.14; Fail→Pass ")


def test_tests_entering_and_leaving_flaky_are_announced_once_per_run(
    xla, endpoint, receiver, upload_run
):
    # States from history on, a short exit: tpu's test_b fails, passes, fails, then passes on.
    xla.history_rules = {"enabled": True, "exit_green": 2}
    xla.save()
    endpoint(events=["flaky_tests", "untracked_gaps"])
    upload_run("cpu", REFERENCE, day="2026-04-01", time="01:00")
    red = ("failed", "AssertionError")
    outcomes = ["passed", red, "passed", red, "passed", "passed", "passed"]
    runs = []
    for hour, outcome in enumerate(outcomes, start=2):
        runs.append(
            upload_run(
                "tpu",
                {A: "passed", B: outcome},
                day="2026-04-01",
                time=f"{hour:02d}:00",
                run=f"tpu-{hour}",
                commit=hashlib.sha1(f"c{hour}".encode()).hexdigest(),
            )  # fmt: skip
        )
    flaky = [g for g in receiver.received if g.headers["X-Parity-Event"] == "flaky_tests"]
    assert all(g.verified for g in flaky)
    # Entered with its second flip (the pass after its first failure), left after two green
    # runs: one event each, none for the runs between.
    assert [(g.body["data"]["run"]["id"], [t["test"] for t in g.body["data"]["entered"]],
             [t["test"] for t in g.body["data"]["left"]]) for g in flaky] == [
        (runs[2], [B], []),
        (runs[5], [], [B]),
    ]  # fmt: skip
    entered = flaky[0].body["data"]["entered"][0]
    assert 0 < entered["rank"] < 1 and entered["url"].endswith(
        f"/tests/{Gap.objects.get().test_id}/"
    )
    assert flaky[0].body["title"] == (
        f"pytorch-xla tpu: 1 test entered flaky, 0 left by run {runs[2]}"
    )
    # Its gap opened once (the first failure, announced untracked) and closed once, by the
    # run that made it leave flaky; held and flaky between, it was in no untracked event.
    untracked = [g for g in receiver.received if g.headers["X-Parity-Event"] == "untracked_gaps"]
    assert [(g.body["data"]["run"]["id"], g.body["data"]["opened_total"]) for g in untracked] == [
        (runs[1], 1)
    ]
    (gap,) = Gap.objects.filter(backend__name="tpu")
    assert gap.opened_run_id == runs[1] and gap.closed_run_id == runs[5]
