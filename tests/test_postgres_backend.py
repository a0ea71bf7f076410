"""acdc.postgres: the health check asks the socket, and the server only when it has spoken.

These tests exist in the PostgreSQL run only (DATABASE_URL=postgres://…), where the backend
is in use; the SQLite run has no such connection to check.
"""

from __future__ import annotations

import select

import psycopg
import pytest
from django.conf import settings
from django.db import connection, connections

from tests.chat.sockets import WAIT

if settings.DATABASES["default"]["ENGINE"] == "acdc.postgres":
    pytestmark = pytest.mark.django_db(transaction=True)

    @pytest.fixture
    def checks(monkeypatch):
        """The real checks Django makes (`is_usable`, one `SELECT 1` each), on a connection
        kept between calls as the server keeps it (the suite's own are never kept)."""
        connection.close()
        monkeypatch.setitem(connections["default"].settings_dict, "CONN_MAX_AGE", 300)
        made: list[bool] = []
        wrapper = type(connections["default"])
        real = wrapper.is_usable

        def is_usable(self):
            made.append(real(self))
            return made[-1]

        monkeypatch.setattr(wrapper, "is_usable", is_usable)
        yield made
        connection.close()

    def backend_pid() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            return cursor.fetchone()[0]

    def next_call() -> None:
        """What channels' database_sync_to_async does around each call."""
        connection.close_if_unusable_or_obsolete()

    def test_a_quiet_kept_connection_is_reused_without_a_round_trip(checks):
        pid = backend_pid()
        next_call()
        assert backend_pid() == pid and checks == []

    def test_a_connection_the_server_ended_is_replaced_before_the_next_query(checks):
        pid = backend_pid()
        params = connection.get_connection_params()
        with psycopg.connect(**params, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        # The server's goodbye reaches the socket: wait for it, not for a fixed time.
        readable, _, _ = select.select([connection.connection.fileno()], [], [], WAIT)
        assert readable
        next_call()
        assert backend_pid() != pid and checks == [False]
