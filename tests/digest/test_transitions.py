"""The digest's version transitions: the week an upgrade ran lists it with its counts (equal
to the uploads' own, ``transitions_scenario``) and a link to its report; other weeks, and a
subscription to other backends, do not."""

import pytest
from django.conf import settings

from parity.digest.render import digest_render
from parity.models import Transition
from parity.pure.weeks import Week
from parity.selectors.digest import digest_content
from tests.parity.transitions_scenario import expected, history, upgrade_upload

UPGRADE_WEEK = Week.parse("2026-W18")  # 2026-05-03, a Sunday, is its last day


@pytest.fixture
def upgraded(xla, ingest, eager_errors_propagate):
    runs = history()
    upgrade_upload(xla, ingest, runs)
    return runs, Transition.objects.get()


def test_the_week_of_the_upgrade_lists_it(xla, upgraded):
    runs, transition = upgraded
    truth = {kind: len(tests) for kind, tests in expected(runs["day2"], runs["day3"]).items()}
    content = digest_content(project=xla, week=UPGRADE_WEEK)
    [row] = content.transitions
    assert (row.backend, row.changed, row.counts, row.lapses) == (
        "rocm-gfx942",
        [("rocm", "7.1", "7.14")],
        truth,
        2,
    )
    rendered = digest_render(content)
    line = (
        f"rocm-gfx942: rocm 7.1 → 7.14: Fail→Pass {truth['fail_to_pass']}, "
        f"Pass→Fail {truth['pass_to_fail']}, new {truth['new']}, gone {truth['gone']}; "
        "2 exemptions stopped or started holding"
    )
    url = f"{settings.SITE_URL}/p/pytorch-xla/transitions/{transition.pk}/"
    assert "VERSION TRANSITIONS" in rendered.text and line in rendered.text
    assert url in rendered.text and f'href="{url}"' in rendered.html
    assert "1 version transition" in rendered.subject


def test_other_weeks_and_other_backends_list_none(xla, upgraded):
    assert digest_content(project=xla, week=UPGRADE_WEEK.next).transitions == []
    assert digest_content(project=xla, week=UPGRADE_WEEK, backends=["tpu"]).transitions == []
    assert (
        "VERSION TRANSITIONS"
        not in digest_render(digest_content(project=xla, week=UPGRADE_WEEK.next)).text
    )
