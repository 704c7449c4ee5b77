import io

import pytest
from django.core import mail
from django.core.management import CommandError, call_command
from django.utils import timezone

from parity.models import DigestDelivery, Subscription
from parity.pure.weeks import Week
from tests.digest import scenario as s


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_subscribe(project):
    out = run("subscribe", "alice@example.com", "pytorch-xla", "--backend", "tpu,neuron")

    subscription = Subscription.objects.get()
    assert out == (
        "Subscribed alice@example.com to pytorch-xla (neuron, tpu).\n"
        "Unsubscribe link: "
        f"https://parity.example.org/digest/unsubscribe/{subscription.token}/\n"
    )
    out = run("subscribe", "alice@example.com", "pytorch-xla", "--backend", "gpu")
    assert out.startswith("Updated the subscription of alice@example.com to pytorch-xla (gpu).")
    assert list(subscription.backends.values_list("name", flat=True)) == ["gpu"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["a@example.com", "jax"], "No project 'jax' (projects: pytorch-xla)."),
        (["a@example.com", "pytorch-xla", "--backend", "cuda"], "has no backend cuda"),
        (["nobody", "pytorch-xla"], "'nobody' is not an email address."),
    ],
)
def test_subscribe_refuses(project, args, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run("subscribe", *args)


def test_send_digest_dry_run_prints_the_text_part(xla, upload_run):
    s.upload_week13(upload_run)
    s.upload_week14(upload_run)
    Subscription.objects.create(project=xla, email="a@example.com")

    out = run("send_digest", "pytorch-xla", "--week", "2026-W14", "--dry-run")

    assert out.startswith(
        "Subject: [parity] pytorch-xla 2026-W14: 4 new gaps (3 untracked), 1 new skip reason\n\n"
        "Parity digest of pytorch-xla, week 2026-W14 (30 Mar to 5 Apr 2026)\n"
    )
    assert "  - [untracked] test/test_b.py::TestB::test_7\n" in out
    assert mail.outbox == [] and not DigestDelivery.objects.exists()


def test_send_digest_sends_once_per_week(project):
    Subscription.objects.create(project=project, email="a@example.com")
    Subscription.objects.create(project=project, email="b@example.com", active=False)

    out = run("send_digest", "pytorch-xla", "--week", "2026-W14")
    assert out == "a@example.com: sent\nDigest 2026-W14 of pytorch-xla: 1 sent in all, 0 failed.\n"
    out = run("send_digest", "pytorch-xla", "--week", "2026-W14")
    assert out == "Digest 2026-W14 of pytorch-xla: 1 sent in all, 0 failed.\n"
    assert [m.to for m in mail.outbox] == [["a@example.com"]]


def test_send_digest_refuses_a_bad_week(project):
    with pytest.raises(CommandError, match="'14' is not an ISO week like 2026-W14."):
        run("send_digest", "pytorch-xla", "--week", "14")


def test_send_digest_refuses_a_week_not_over(project):
    this_week = str(Week.of(timezone.now()))
    with pytest.raises(CommandError, match="has not ended yet .* Use --dry-run to see it so far."):
        run("send_digest", "pytorch-xla", "--week", this_week)
    assert not DigestDelivery.objects.exists()
    assert "Quiet week" in run("send_digest", "pytorch-xla", "--week", this_week, "--dry-run")
