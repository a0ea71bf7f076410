"""Django's PostgreSQL backend, with a health check that asks the socket before the server.

Channels runs each database call of a turn in `database_sync_to_async`, which closes
unusable connections around it; with health checks on, Django then sends `SELECT 1`
before the first query of every call: four extra round trips of a turn's eleven
(`acdc bench turn --part load`). An idle connection in autocommit has nothing to read;
a server that has hung up (restart, `pg_terminate_backend`, idle timeout) has sent its
goodbye and closed, which leaves the socket readable. So a connection whose socket has
nothing to say is used as it is, and only a readable one gets Django's real check.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
    def close_if_health_check_failed(self) -> None:
        connection = self.connection
        if (
            connection is not None
            and self.health_check_enabled
            and not self.health_check_done
            and _quiet(connection)
        ):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()


def _quiet(connection) -> bool:
    """Whether an idle connection is open with nothing waiting to be read."""
    if connection.closed or connection.broken:
        return False
    try:
        readable, _, _ = select.select([connection.fileno()], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable
