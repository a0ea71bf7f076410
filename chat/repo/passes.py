"""Background passes over a repository: at most one of each kind per repository at a time.

The Files panel's token counts (chat.repo.picker) and outline counts (chat.repo.outlines)
are each worked out by one thread per (kind, repository) in the process, however many tabs
connect: `start` runs the work unless a pass of that kind already runs for the repository,
and says which happened, so a tab that connects meanwhile joins the running pass (its
progress reaches every tab of the repository) instead of reading and counting everything
again. A failed pass is logged (a damaged database as its one line, without a traceback); the
next connection starts another.
Non-goals: what a pass computes, and how its progress reaches the tabs (chat.live.consumers).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from django.db import close_old_connections

from history import dbfaults

log = logging.getLogger(__name__)


class Passes:
    """The running background passes of this process, by (kind, repository)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._workers: dict[tuple[str, str], threading.Thread] = {}

    def start(self, kind: str, repo: Path, work: Callable[[], object]) -> bool:
        """Run `work` in a thread unless a `kind` pass already runs for `repo`; returns
        whether a new one started."""
        key = (kind, str(Path(repo).resolve()))
        with self._lock:
            worker = self._workers.get(key)
            if worker is not None and worker.is_alive():
                return False
            worker = threading.Thread(
                target=_run, args=(kind, repo, work), daemon=True, name=f"acdc-{kind}"
            )
            self._workers[key] = worker
            worker.start()
        return True

    def wait(self, timeout: float = 30.0) -> None:
        """Until every pass has finished (tests, shutdown)."""
        with self._lock:
            workers = list(self._workers.values())
        for worker in workers:
            worker.join(timeout)


def _run(kind: str, repo: Path, work: Callable[[], object]) -> None:
    try:
        work()
    except Exception as exc:
        if not dbfaults.is_damaged(exc):
            log.exception("the %s pass failed for %s", kind, repo)
        else:  # not a bug of the pass: the one line that says what to do, no traceback
            log.error("the %s pass stopped: %s", kind, dbfaults.damaged_line(exc))
    finally:
        close_old_connections()  # the thread's own database connection, if it opened one
