"""The selection's sync is planned in plain Python from the entries and what the engine
holds (no database, no disk): what to keep, what to drop and the notices, before one
apply writes it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chat.repo.sessionsets import Entry
from chat.session.sets import Collapse, plan_sets
from contextcore import objectview

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def entry(object_id: str, path: str = "", **fields) -> Entry:
    values = dict(
        type="file",
        path=path,
        in_pool=True,
        active=True,
        pinned=False,
        stub=False,
        deleted=False,
        char_count=10,
        tool="",
        status="",
        content=None,
        file_hash=None,
    )
    return Entry(object_id=object_id, **{**values, **fields})


def test_the_plan_keeps_active_files_drops_deleted_ones_and_says_why():
    entries = [
        entry("f1", "a.py", pinned=True),
        entry("f2", "gone.py", deleted=True),
        entry("f3", "b.py", outline=True),
        entry("f4", "c.py", outline=True),
        entry("f5", "stub.py", stub=True),
        entry("f6", "off.py", active=False),
    ]
    outlines = {"b.py": "def b(): ...", "c.py": ValueError("no grammar")}
    plan = plan_sets(entries, held=["old.py", "a.py"], outline_texts=outlines, collapse=Collapse())
    assert plan.wanted == {"a.py": ("f1", None), "b.py": ("f3", "def b(): ...")}
    assert plan.remove == ("old.py",)
    assert plan.drop == ("f2", "f4")
    assert [n.paths for n in plan.notices] == [("gone.py",), ("c.py",)]
    assert "the file was deleted" in plan.notices[0].text
    assert "no outline (no grammar)" in plan.notices[1].text
    assert plan.pinned == {"a.py", objectview.active_label("f1")}  # as the engine may key it
    assert len(plan.metadata) == len(entries)


def test_tool_outputs_outside_the_window_go_inactive_and_the_pinned_one_stays():
    starts = [T0 + timedelta(minutes=n) for n in range(6)]  # six turns
    outputs = [
        entry(
            f"t{n}",
            type="toolcall",
            content=f"out {n}",
            indexed_at=starts[n] + timedelta(seconds=1),
        )
        for n in range(6)
    ]
    outputs[0] = entry("t0", type="toolcall", content="kept", pinned=True, indexed_at=starts[0])
    plan = plan_sets(outputs, held=[], outline_texts={}, collapse=Collapse(starts, 5, 3))
    assert set(plan.drop) == {"t1", "t2"}  # turns 1 and 2 are past the last three
    assert {e.object_id for e in plan.entries if not e.active} == {"t1", "t2"}
    label = objectview.active_label
    assert set(plan.wanted) == {label("t0"), label("t3"), label("t4"), label("t5")}
    assert plan.wanted[label("t0")] == ("t0", "kept") and plan.pinned == {label("t0")}


def test_a_file_active_as_an_outline_that_was_never_read_leaves_with_a_notice():
    plan = plan_sets([entry("f1", "a.py", outline=True)], [], {}, Collapse())
    assert plan.drop == ("f1",) and plan.wanted == {}
    assert plan.notices[0].level == "warning"
