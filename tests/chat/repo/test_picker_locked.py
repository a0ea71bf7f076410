"""Counting the Files panel's tokens while another program holds the database's write lock.

The counts are worked out all the same (the page gets every one); only keeping them in the
TokenCount table waits for the lock, once per pass, and gives up with one warning line and
no traceback; the next pass, the lock gone, keeps them. The lock is real: another process
holds `BEGIN EXCLUSIVE` (tests/chat/live/test_locked_database.py's Holder). SQLite only.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from django.db import connections

from chat.models import TokenCount
from chat.repo import picker
from chat.repo.passes import Passes
from contextcore.tokens import TokenCounter
from tests.chat.live.test_locked_database import Holder

if connections["default"].vendor == "sqlite":
    pytestmark = pytest.mark.django_db(transaction=True)

    @pytest.fixture
    def repo_files():
        return {f"src/m{n}.py": f"VALUE_{n} = {n}\n" for n in range(3 * 7)}

    def test_counting_under_a_lock_counts_and_warns_once_without_a_traceback(
        root, caplog, monkeypatch
    ):
        monkeypatch.setattr(picker, "BATCH_FILES", 7)  # three batches, three writes
        options = connections["default"].settings_dict["OPTIONS"]
        monkeypatch.setitem(options, "timeout", 0.3)
        connections["default"].close()  # the next connection waits the lock that long
        paths = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
        passes = Passes()
        counts = picker.TokenCounts(passes, TokenCounter(picker.ENCODING))
        seen: list[int] = []
        holder = Holder(Path(connections["default"].settings_dict["NAME"]))
        try:
            with caplog.at_level(logging.INFO):
                assert counts.count_in_background(root, paths, lambda d, t, f: seen.append(d))
                passes.wait(60)
        finally:
            holder.release()
        assert seen[-1] == len(paths)
        assert all(count.tokens for count in counts.peek(root, paths).values())
        assert not [r for r in caplog.records if r.exc_info], caplog.text
        warned = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warned) == 1, caplog.text
        assert "locked by another program (pid" in warned[0].getMessage()
        assert TokenCount.objects.count() == 0

        fresh = picker.TokenCounts(Passes(), TokenCounter(picker.ENCODING))
        assert len(fresh.count(root, paths)) == len(paths)
        assert TokenCount.objects.count() == len(paths)
