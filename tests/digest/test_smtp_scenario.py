"""The weekly digest end to end, against a real SMTP server: two weeks of runs uploaded through
the API, the beat's task sending each subscription its digest, the unsubscribe link."""

from parity.digest.services import subscription_subscribe
from parity.digest.tasks import digest_weekly
from parity.models import DigestDelivery, Subscription, TestCase
from tests.digest import scenario as s
from tests.digest.conftest import visible

SITE = "https://parity.example.org"
P = f"{SITE}/p/pytorch-xla"


def test_ids() -> dict[int, int]:
    return {n: TestCase.objects.get(key=key).pk for n, key in s.T.items()}


test_ids.__test__ = False  # a helper, not a test

ALICE_W14 = """\
Parity digest of pytorch-xla, week 2026-W14 (30 Mar to 5 Apr 2026)

This week: 4 new gaps (3 untracked), 1 new skip reason.

Parity scores against cpu (the reference backend; intended gaps not counted), change over the week:
  gpu      no run yet
  neuron    71.4%  -28.6 pts   2 open gaps, 2 untracked
  tpu       57.1%  -28.6 pts   3 open gaps, 2 untracked

NEW GAPS (opened this week and still open; untracked first)

neuron, error: 1 (1 untracked)
  - [untracked] test/test_b.py::TestB::test_7
    reason: RuntimeError: device lost
    {P}/tests/{t[7]}/

neuron, missing: 1 (1 untracked)
  - [untracked] test/test_b.py::TestB::test_6
    {P}/tests/{t[6]}/

tpu, failed: 1 (1 untracked)
  - [untracked] test/ops/test_a.py::TestA::test_3
    reason: Tensor-likes are not close!
    {P}/tests/{t[3]}/

tpu, skipped: 1 (0 untracked)
  - [tracked] test/ops/test_a.py::TestA::test_4
    reason: Not supported on TPU, see https://github.com/pytorch/xla/issues/1234
    issue: pytorch/xla#1234 https://github.com/pytorch/xla/issues/1234
    {P}/tests/{t[4]}/

All new gaps: {P}/gaps/?since=2026-03-30

NEW SKIP REASONS
  - "Not supported on TPU, see https://github.com/pytorch/xla/issues/1234" on tpu
    category: not implemented on the backend
    issue: pytorch/xla#1234 https://github.com/pytorch/xla/issues/1234

SKIPS BY CATEGORY (current runs: skipped tests, gaps, untracked)
  - not implemented on the backend [needs work]: 2 skipped, 2 gaps, 1 untracked
  - not on this hardware [by design]: 3 skipped, 0 gaps, 0 untracked
Skip reasons: {P}/skip-reasons/

Dashboard: {P}/
Unsubscribe: {SITE}/digest/unsubscribe/{token}/
"""

ALICE_W14_HTML = (
    "pytorch-xla parity digest 2026-W14 "
    "Parity digest of pytorch-xla Week 2026-W14 (30 Mar to 5 Apr 2026) "
    "This week: 4 new gaps (3 untracked), 1 new skip reason. "
    "Parity scores against cpu (the reference backend; intended gaps not counted) "
    "Backend Score Change over the week Open gaps Untracked "
    "gpu no run yet neuron 71.4% -28.6 pts 2 2 tpu 57.1% -28.6 pts 3 2 "
    "New gaps opened this week and still open, untracked first "
    "neuron, error: 1 (1 untracked) Test Tracking Reason Issue "
    "test/test_b.py::TestB::test_7 untracked RuntimeError: device lost "
    "neuron, missing: 1 (1 untracked) Test Tracking Reason Issue "
    "test/test_b.py::TestB::test_6 untracked "
    "tpu, failed: 1 (1 untracked) Test Tracking Reason Issue "
    "test/ops/test_a.py::TestA::test_3 untracked Tensor-likes are not close! "
    "tpu, skipped: 1 (0 untracked) Test Tracking Reason Issue "
    "test/ops/test_a.py::TestA::test_4 tracked "
    "Not supported on TPU, see https://github.com/pytorch/xla/issues/1234 "
    "pytorch/xla#1234 All new gaps "
    "New skip reasons “Not supported on TPU, see https://github.com/pytorch/xla/issues/1234” "
    "on tpu (not implemented on the backend) · pytorch/xla#1234 "
    "Skips by category in the current runs, by the project's skip rules "
    "Category Disposition Skipped tests Gaps Untracked "
    "not implemented on the backend needs work 2 2 1 not on this hardware by design 3 0 0 "
    "Skip reasons Dashboard · Unsubscribe"
)

BOB_W14 = """\
Parity digest of pytorch-xla (tpu), week 2026-W14 (30 Mar to 5 Apr 2026)

This week: 2 new gaps (1 untracked), 1 new skip reason.

Parity scores against cpu (the reference backend; intended gaps not counted), change over the week:
  tpu       57.1%  -28.6 pts   3 open gaps, 2 untracked

NEW GAPS (opened this week and still open; untracked first)

tpu, failed: 1 (1 untracked)
  - [untracked] test/ops/test_a.py::TestA::test_3
    reason: Tensor-likes are not close!
    {P}/tests/{t[3]}/

tpu, skipped: 1 (0 untracked)
  - [tracked] test/ops/test_a.py::TestA::test_4
    reason: Not supported on TPU, see https://github.com/pytorch/xla/issues/1234
    issue: pytorch/xla#1234 https://github.com/pytorch/xla/issues/1234
    {P}/tests/{t[4]}/

All new gaps: {P}/gaps/?since=2026-03-30&backend=tpu

NEW SKIP REASONS
  - "Not supported on TPU, see https://github.com/pytorch/xla/issues/1234" on tpu
    category: not implemented on the backend
    issue: pytorch/xla#1234 https://github.com/pytorch/xla/issues/1234

SKIPS BY CATEGORY (current runs: skipped tests, gaps, untracked)
  - not implemented on the backend [needs work]: 2 skipped, 2 gaps, 1 untracked
  - not on this hardware [by design]: 1 skipped, 0 gaps, 0 untracked
Skip reasons: {P}/skip-reasons/

Dashboard: {P}/
Unsubscribe: {SITE}/digest/unsubscribe/{token}/
"""

ALICE_W15 = """\
Parity digest of pytorch-xla, week 2026-W15 (6 Apr to 12 Apr 2026)

This week: 1 new gap (1 untracked), 2 fixed, 1 new skip reason, 2 issue link changes.

Parity scores against cpu (the reference backend; intended gaps not counted), change over the week:
  gpu      no run yet
  neuron    85.7%  +14.3 pts   1 open gap, 1 untracked
  tpu       57.1%  no change   3 open gaps, 2 untracked

NEW GAPS (opened this week and still open; untracked first)

tpu, skipped: 1 (1 untracked)
  - [untracked] test/test_b.py::TestB::test_5
    reason: TPU computes in bf16
    {P}/tests/{t[5]}/

All new gaps: {P}/gaps/?since=2026-04-06

FIXED THIS WEEK
  - neuron: test/test_b.py::TestB::test_6 (was missing)
  - tpu: test/ops/test_a.py::TestA::test_3 (was failed)
All fixed gaps: {P}/gaps/?since=2026-04-06#fixed-gaps

NEW SKIP REASONS
  - "TPU computes in bf16" on tpu
    category: numerics or tolerance

SKIPS BY CATEGORY (current runs: skipped tests, gaps, untracked)
  - not implemented on the backend [needs work]: 2 skipped, 2 gaps, 1 untracked
  - numerics or tolerance [needs work]: 1 skipped, 1 gap, 1 untracked
  - not on this hardware [by design]: 3 skipped, 0 gaps, 0 untracked
Skip reasons: {P}/skip-reasons/

REASONS THAT GAINED OR LOST AN ISSUE LINK
  - "Not supported on TPU, see https://github.com/pytorch/xla/issues/1234"
    lost pytorch/xla#1234 https://github.com/pytorch/xla/issues/1234
  - "not implemented yet"
    gained pytorch/xla#777 https://github.com/pytorch/xla/issues/777

Dashboard: {P}/
Unsubscribe: {SITE}/digest/unsubscribe/{token}/
"""

ALICE_W15_HTML = (
    "pytorch-xla parity digest 2026-W15 "
    "Parity digest of pytorch-xla Week 2026-W15 (6 Apr to 12 Apr 2026) "
    "This week: 1 new gap (1 untracked), 2 fixed, 1 new skip reason, 2 issue link changes. "
    "Parity scores against cpu (the reference backend; intended gaps not counted) "
    "Backend Score Change over the week Open gaps Untracked "
    "gpu no run yet neuron 85.7% +14.3 pts 1 1 tpu 57.1% no change 3 2 "
    "New gaps opened this week and still open, untracked first "
    "tpu, skipped: 1 (1 untracked) Test Tracking Reason Issue "
    "test/test_b.py::TestB::test_5 untracked TPU computes in bf16 All new gaps "
    "Fixed this week Backend Test Was "
    "neuron test/test_b.py::TestB::test_6 missing tpu test/ops/test_a.py::TestA::test_3 failed "
    "All fixed gaps New skip reasons “TPU computes in bf16” on tpu (numerics or tolerance) "
    "Skips by category in the current runs, by the project's skip rules "
    "Category Disposition Skipped tests Gaps Untracked "
    "not implemented on the backend needs work 2 2 1 numerics or tolerance needs work 1 1 1 "
    "not on this hardware by design 3 0 0 Skip reasons "
    "Reasons that gained or lost an issue link "
    "“Not supported on TPU, see https://github.com/pytorch/xla/issues/1234” lost pytorch/xla#1234 "
    "“not implemented yet” gained pytorch/xla#777 Dashboard · Unsubscribe"
)


def _expect(template: str, subscription: Subscription) -> str:
    return template.format(P=P, SITE=SITE, t=test_ids(), token=subscription.token)


def test_two_weeks_of_digests_then_an_unsubscribe(xla, upload_run, api, smtp, client):
    alice, _ = subscription_subscribe(project=xla, email="alice@example.com")
    bob, _ = subscription_subscribe(project=xla, email="Bob@Example.com", backends=["tpu"])
    s.upload_week13(upload_run)
    s.upload_week14(upload_run)

    digest_weekly.delay(week="2026-W14")  # Monday 6 April, 08:00

    assert [(r.mail_from, r.rcpt_tos) for r in smtp.received] == [
        ("parity@example.org", ["alice@example.com"]),
        ("parity@example.org", ["bob@example.com"]),
    ]
    mail, bob_mail = smtp.received
    t = test_ids()
    unsubscribe = f"{SITE}/digest/unsubscribe/{alice.token}/"
    assert mail.message["Subject"] == (
        "[parity] pytorch-xla 2026-W14: 4 new gaps (3 untracked), 1 new skip reason"
    )
    assert (mail.message["From"], mail.message["To"]) == ("parity@example.org", alice.email)
    assert mail.message["List-Unsubscribe"].strip() == f"<{unsubscribe}>"
    assert mail.message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert mail.text == _expect(ALICE_W14, alice)
    text, links = visible(mail.html)
    assert text == ALICE_W14_HTML
    assert links == [
        f"{P}/",
        *(f"{P}/tests/{t[n]}/" for n in (7, 6, 3, 4)),  # the listed gaps, in order
        "https://github.com/pytorch/xla/issues/1234",
        f"{P}/gaps/?since=2026-03-30",
        "https://github.com/pytorch/xla/issues/1234",
        f"{P}/skip-reasons/",
        f"{P}/",
        unsubscribe,
    ]

    for link in links[:-1]:  # every dashboard page the mail links to opens
        if link.startswith(SITE):
            assert client.get(link.removeprefix(SITE)).status_code == 200, link

    assert bob_mail.message["Subject"] == (
        "[parity] pytorch-xla (tpu) 2026-W14: 2 new gaps (1 untracked), 1 new skip reason"
    )
    assert bob_mail.text == _expect(BOB_W14, bob)
    assert [link for link in visible(bob_mail.html)[1] if "/tests/" in link] == [
        f"{P}/tests/{t[3]}/",
        f"{P}/tests/{t[4]}/",
    ]

    # Bob follows his link: GET only asks (mail scanners fetch links), the button unsubscribes.
    link = bob_mail.message["List-Unsubscribe"].strip().strip("<>").removeprefix(SITE)
    page = client.get(link)
    assert page.status_code == 200 and b'<form method="post">' in page.content
    assert Subscription.objects.get(pk=bob.pk).active
    assert client.post(link).status_code == 200
    assert not Subscription.objects.get(pk=bob.pk).active

    s.relink_reasons(api)
    s.upload_week15(upload_run)
    digest_weekly.delay(week="2026-W15")

    (w15,) = smtp.received[2:]
    assert w15.rcpt_tos == ["alice@example.com"]  # not Bob any more
    assert w15.message["Subject"] == (
        "[parity] pytorch-xla 2026-W15: 1 new gap (1 untracked), 2 fixed, 1 new skip reason, "
        "2 issue link changes"
    )
    assert w15.text == _expect(ALICE_W15, alice)
    text, links = visible(w15.html)
    assert text == ALICE_W15_HTML
    assert [link for link in links if "/tests/" in link] == [
        f"{P}/tests/{t[n]}/" for n in (5, 6, 3)
    ]
    assert sorted(DigestDelivery.objects.values_list("subscription__email", "week", "status")) == [
        ("alice@example.com", s.W14.monday, "sent"),
        ("alice@example.com", s.W15.monday, "sent"),
        ("bob@example.com", s.W14.monday, "sent"),
    ]
