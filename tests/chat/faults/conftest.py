"""The fault tests' shared fixture: the test database moved onto a small disk of its own."""

from __future__ import annotations

import pytest

from tests.chat.faults.smalldisk import SmallDisk


@pytest.fixture
def disk(tmp_path):
    small = SmallDisk(tmp_path / "small")
    small.take_database()
    yield small
    small.close()
