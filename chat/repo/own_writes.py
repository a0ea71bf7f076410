"""acdc's own writes to the repository, noted for the watcher: the served repository holds
one (`chat.live.served`), and every `indexing.Repository` it hands out carries it, so the
disk's writes (`chat.repo.edits.disk`) note there whatever path wrote them.
Non-goals: writing (disk), watching (watcher).
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

OWN_WRITE_SECONDS = 120.0


class OwnWrites:
    """Files acdc itself just wrote, with the sha256 written (None: deleted), so the
    watcher can tell acdc's write from the person's: the same path with the same bytes is
    ours, anything else is not. Entries lapse after `OWN_WRITE_SECONDS`."""

    def __init__(self, clock=time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._written: dict[str, tuple[str | None, float]] = {}

    def note(self, full: Path, sha256: str | None) -> None:
        with self._lock:
            now = self._clock()
            self._written = {k: v for k, v in self._written.items() if v[1] > now}
            self._written[str(full)] = (sha256, now + OWN_WRITE_SECONDS)

    def is_own(self, full: Path) -> bool:
        """Whether `full` holds exactly what acdc last wrote there (or is gone as acdc
        left it), within the lapse time."""
        with self._lock:
            entry = self._written.get(str(full))
        if entry is None or entry[1] <= self._clock():
            return False
        try:
            current = hashlib.sha256(full.read_bytes()).hexdigest()
        except FileNotFoundError:
            current = None
        except OSError:
            return False
        return current == entry[0]
