""" "My gaps": a subscription with a code owner gets the digest of the gaps of that owner's test
files only (new, fixed, tracked by closed issues), with how many of theirs are open."""

import pytest
from django.core import mail
from django.core.management import call_command

from parity.digest.render import digest_context, digest_render
from parity.digest.services import (
    SubscriptionRejected,
    digest_deliver,
    digest_week_plan,
    subscription_subscribe,
)
from parity.models import Gap, GapState, Subscription
from parity.pure.codeowners import codeowners_parse, owners_of
from parity.selectors.digest import digest_content
from parity.services.owners import owners_import
from tests.digest import scenario as s

# The scenario's files: t1-t4 in test/ops/test_a.py, t5-t8 in test/test_b.py.
OWNERS = "*  @pytorch/xla-infra\n/test/ops/  @ops-team @Alice\n"


@pytest.fixture
def three_weeks(xla, upload_run, api):
    s.upload_week13(upload_run)
    s.upload_week14(upload_run)
    digest_week_plan(week=s.W14)
    s.relink_reasons(api)
    s.upload_week15(upload_run)
    owners_import(project=xla, text=OWNERS, name="CODEOWNERS")
    return xla


def numbers(rows) -> list[tuple[str, str]]:
    return [(row.backend, row.test.rsplit("_", 1)[1]) for row in rows]


def owners(file: str) -> tuple[str, ...]:
    rule = owners_of(codeowners_parse(OWNERS).rules, file)
    return rule.owners if rule else ()


def test_an_owners_digest_lists_only_their_files_gaps(three_weeks):
    everyone = digest_content(project=three_weeks, week=s.W14)
    mine = digest_content(project=three_weeks, week=s.W14, owner="@Ops-Team")

    new = [row for b in everyone.new_gaps for g in b.groups for row in g.gaps]
    theirs = [row for b in mine.new_gaps for g in b.groups for row in g.gaps]
    assert numbers(theirs) == [r for r in numbers(new) if r[1] in "1234"]  # test_a.py's
    assert numbers(theirs) == [("tpu", "3"), ("tpu", "4")] and len(new) == 4
    later = digest_content(project=three_weeks, week=s.W15, owner="@ops-team")
    assert numbers(later.fixed) == [("tpu", "3")]  # neuron's t6 is test_b.py's
    assert mine.owner == "@ops-team" and [r.backend for r in mine.scores] == [
        "gpu",
        "neuron",
        "tpu",
    ]


def test_an_owners_digest_counts_their_open_gaps(three_weeks):
    content = digest_content(project=three_weeks, week=s.W15, owner="@alice")

    gaps = Gap.objects.filter(is_open=True).exclude(state=GapState.REFERENCE_MISSING)
    theirs = [g for g in gaps.select_related("backend", "test") if "@alice" in owners(g.test.file)]
    expected = {}
    for gap in theirs:
        open_, untracked = expected.get(gap.backend.name, (0, 0))
        expected[gap.backend.name] = (open_ + 1, untracked + (not (gap.tracked or gap.intended)))
    assert {o.backend: (o.open, o.untracked) for o in content.owned_open} == expected
    assert expected  # tpu's t2 and t4 stay open

    rendered = digest_render(content)
    assert "OPEN GAPS OF @alice" in rendered.text
    assert "@alice's open gaps" in rendered.html
    links = digest_context(content, unsubscribe_url=None)["links"]
    assert links.owned.endswith("/p/pytorch-xla/gaps/?open=1&owner=%40alice")
    assert links.new_gaps.endswith("/p/pytorch-xla/gaps/?since=2026-04-06&owner=%40alice")


def test_a_subscription_with_an_owner_is_sent_their_gaps(three_weeks):
    subscription_subscribe(project=three_weeks, email="a@example.com", owner="@Alice")
    subscription_subscribe(project=three_weeks, email="b@example.com")
    for delivery_id in digest_week_plan(week=s.W14):
        digest_deliver(delivery_id=delivery_id)

    by_address = {m.to[0]: m for m in mail.outbox}
    assert by_address["a@example.com"].subject.startswith("[parity] pytorch-xla (@alice's gaps)")
    assert "2 new gaps" in by_address["a@example.com"].subject
    assert "4 new gaps" in by_address["b@example.com"].subject


def test_subscribe_takes_an_owner_and_refuses_a_bad_one(three_weeks, capsys):
    call_command("subscribe", "c@example.com", "pytorch-xla", "--owner", "@Ops-Team")

    assert "(every backend; @ops-team's gaps)" in capsys.readouterr().out
    assert Subscription.objects.get(email="c@example.com").owner == "@ops-team"
    with pytest.raises(SubscriptionRejected, match="not a code owner"):
        subscription_subscribe(project=three_weeks, email="c@example.com", owner="ops team")
