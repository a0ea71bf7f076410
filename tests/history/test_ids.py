from __future__ import annotations

import re

from history.ids import new_message_id, new_session_id


def test_message_ids_have_the_seed_format():
    assert re.fullmatch(r"\d{13}-[0-9a-f]{8}", new_message_id())


def test_session_ids_have_the_seed_format():
    assert re.fullmatch(r"sess_\d{13}_[0-9a-f]{6}", new_session_id())


def test_ids_use_the_clock_given():
    assert new_message_id(clock=lambda: 1.5).startswith("1500-")
    assert new_session_id(clock=lambda: 2.0).startswith("sess_2000_")


def test_a_hundred_ids_are_unique():
    assert len({new_message_id() for _ in range(100)}) == 100
    assert len({new_session_id() for _ in range(100)}) == 100
