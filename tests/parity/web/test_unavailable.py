"""Which database errors answer 503: a connection Postgres refuses, never a failed statement."""

import pytest
from django.db import OperationalError, connection, connections
from django.db.utils import load_backend

from parity.web.unavailable import database_unreachable
from tests.e2e.redis_server import free_port


def _refused() -> OperationalError:
    """What Django raises when no Postgres listens where it connects."""
    settings = {**connection.settings_dict, "HOST": "127.0.0.1", "PORT": str(free_port())}
    backend = load_backend(settings["ENGINE"]).DatabaseWrapper(settings, alias="refused")
    with pytest.raises(OperationalError) as raised:
        backend.ensure_connection()
    return raised.value


@pytest.mark.django_db  # pytest-django refuses any connection attempt without it
def test_a_refused_connection_is_unreachable():
    assert database_unreachable(_refused())


@pytest.mark.django_db
def test_a_statement_postgres_cancels_is_not():
    # A timeout (57014) or a deadlock (40P01) is the request's own failure: a 500 worth a look.
    with pytest.raises(OperationalError) as raised, connections["default"].cursor() as cursor:
        cursor.execute("SET LOCAL statement_timeout = 1; SELECT pg_sleep(1)")
    assert not database_unreachable(raised.value)
