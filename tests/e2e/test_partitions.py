"""Day partitions on the live stack: an upload of a run whose day has no partition yet (beat
never ran for it) is stored by gunicorn and ingested by the Celery worker into a partition made
for it, and the run's page and verdict read it back over HTTP (issue 37)."""

import datetime

import pytest
from django.db import connection

from parity.models import Result
from parity.pure.run_days import day_of, run_day
from parity.storage.partitions import partition_drop, partitions_list
from tests.e2e.expect import upload_settled
from tests.junit_builder import Case, junit_xml

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RUN_ID_ON_DAY = """
CREATE OR REPLACE FUNCTION parity_run_id_next() RETURNS bigint LANGUAGE sql VOLATILE AS $$
    SELECT ({day}::bigint << 32) + nextval('parity_run_day_seq') % (1::bigint << 32)
$$
"""
RUN_ID_TODAY = """
CREATE OR REPLACE FUNCTION parity_run_id_next() RETURNS bigint LANGUAGE sql VOLATILE AS $$
    SELECT (floor(extract(epoch FROM now()) / 86400)::bigint << 32)
           + nextval('parity_run_day_seq') % (1::bigint << 32)
$$
"""


@pytest.fixture
def a_day_without_partitions():
    """Runs created from now on take a day nine days ahead, which has no partition."""
    day = day_of(datetime.datetime.now(datetime.UTC).date()) + 9
    partition_drop(day=day)
    with connection.cursor() as cursor:
        cursor.execute(RUN_ID_ON_DAY.format(day=day))
    yield day
    with connection.cursor() as cursor:
        cursor.execute(RUN_ID_TODAY)
    partition_drop(day=day)


def test_an_upload_on_a_day_without_its_partition_is_ingested_and_read(
    http_api, live, a_day_without_partitions
):
    day = a_day_without_partitions
    assert day not in partitions_list()
    xml = junit_xml(
        Case("TestOps", "test_0", "passed", "", file="test/test_ops.py"),
        Case("TestOps", "test_1", "failed", "AssertionError", file="test/test_ops.py"),
    )
    reply = http_api.post_upload(("report.xml", xml), backend="cpu", complete="true")
    assert reply.status == 202, str(reply)
    body = upload_settled(http_api, reply.body["id"], seconds=60, live=live)

    assert body["status"] == "done", body
    run = reply.body["run"]
    assert run_day(run) == day and day in partitions_list()
    assert Result.objects.filter(run_id=run).count() == 2
    page = http_api.request("GET", f"/p/pytorch-xla/runs/{run}/")
    verdict = http_api.request("GET", f"/api/v1/runs/{run}/verdict/")
    assert (page.status, verdict.status) == (200, 200), (str(page), str(verdict))
    assert verdict.body["test_count"] == 2
