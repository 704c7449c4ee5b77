"""The digest's pages answer in a fixed number of queries: the preview the same for a week of
two weeks' history as for one of three, the unsubscribe page in one."""

import pytest

from parity.digest.services import subscription_subscribe
from tests.digest import scenario as s

PREVIEW = "/p/pytorch-xla/digest/?week=2026-W14"
# Project; backends, the reference; fixed gaps; latest snapshots at the week's end and start;
# new gaps and their reasons' issues; new reasons' days, the reasons, their issues; the links'
# records (none at the week's start: no link changes to read); gaps tracked by closed issues;
# exemptions that pass now; skips and gaps per category; the week's version transitions; the
# project's targets (none here: one query); whether any triage is conditioned or expired, and
# any was removed (none: no run is judged for uncovered); the tests that entered or left flaky;
# the suites' tier moves of the week; whether any test has a suite (none: no suite is read);
# the compare views with red tests.
PREVIEW_QUERIES = 24
UNSUBSCRIBE_QUERIES = 1  # the subscription, with its project


def test_the_preview_reads_a_fixed_number_of_queries(
    xla, upload_run, client, django_assert_num_queries
):
    s.upload_week13(upload_run)
    s.upload_week14(upload_run)
    with django_assert_num_queries(PREVIEW_QUERIES):
        assert client.get(PREVIEW).status_code == 200
    s.upload_week15(upload_run)  # a later week: more history, the same week asked for
    with django_assert_num_queries(PREVIEW_QUERIES):
        assert client.get(PREVIEW).status_code == 200


@pytest.mark.django_db
def test_the_unsubscribe_page_reads_one_query(project, client, django_assert_num_queries):
    subscription = subscription_subscribe(project=project, email="alice@example.com")[0]
    with django_assert_num_queries(UNSUBSCRIBE_QUERIES):
        assert client.get(f"/digest/unsubscribe/{subscription.token}/").status_code == 200
