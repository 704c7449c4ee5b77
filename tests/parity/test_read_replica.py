"""Where reads go (``parity.read_replica``): the router and the routed raw cursor follow
``reads_from``; who is asking and every write stay on the primary. Here the replica alias is a
test mirror of the test database (parity.settings.test); tests/e2e/test_read_replica.py runs
against a real streaming replica."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.db import DEFAULT_DB_ALIAS, connections, router
from django.test.utils import CaptureQueriesContext

from parity.models import Gap, Membership, Snapshot, UploadToken
from parity.read_replica import REPLICA, read_cursor, reads_alias, reads_from
from parity.selectors.owners import owners_summary


def test_reads_go_to_the_primary_unless_a_page_read_names_the_replica():
    assert reads_alias() == DEFAULT_DB_ALIAS
    assert router.db_for_read(Gap) == DEFAULT_DB_ALIAS
    with reads_from(REPLICA):
        assert [router.db_for_read(m) for m in (Gap, Snapshot)] == [REPLICA, REPLICA]
        assert Gap.objects.all().db == REPLICA
        # Who is asking, and may they: the primary, so a new token or login works at once.
        identity = (get_user_model(), Session, UploadToken, Membership)
        assert {router.db_for_read(m) for m in identity} == {DEFAULT_DB_ALIAS}
        assert router.db_for_write(Gap) == DEFAULT_DB_ALIAS
    assert router.db_for_read(Gap) == DEFAULT_DB_ALIAS


def test_migrations_run_on_the_primary_only():
    assert router.allow_migrate(DEFAULT_DB_ALIAS, "parity")
    assert not router.allow_migrate(REPLICA, "parity")


@pytest.mark.django_db(transaction=True, databases=[DEFAULT_DB_ALIAS, REPLICA])
def test_raw_sql_takes_the_cursor_of_the_database_reads_go_to():
    with read_cursor() as cursor:
        assert cursor.db.alias == DEFAULT_DB_ALIAS
    with reads_from(REPLICA):
        with read_cursor() as cursor:
            assert cursor.db.alias == REPLICA
        with read_cursor(atomic=True) as cursor:
            cursor.execute("SET LOCAL work_mem = '8MB'")
            assert connections[REPLICA].in_atomic_block
        assert not connections[REPLICA].in_atomic_block
        # A hot standby refuses temporary tables: statements that make them stay on the primary.
        with read_cursor(temp_tables=True) as cursor:
            assert cursor.db.alias == DEFAULT_DB_ALIAS


@pytest.mark.django_db(databases=[DEFAULT_DB_ALIAS, REPLICA])
def test_a_selector_reading_by_raw_sql_follows_the_page_to_the_replica(project):
    with (
        reads_from(REPLICA),
        CaptureQueriesContext(connections[REPLICA]) as replica,
        CaptureQueriesContext(connections[DEFAULT_DB_ALIAS]) as primary,
    ):
        owners_summary(project=project)
    assert len(replica) == 4  # the ORM's three and the raw GROUP BY of gaps per owner
    assert len(primary) == 0
