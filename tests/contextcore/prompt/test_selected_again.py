"""A file selected again while its last copy is still in the cached prefix.

People switch files in and out of the selection all the time. A dropped file's copy stays
in the prefix (see the stale-copy rule), so when it comes back unchanged the layout sends
a one-line notice pointing at that copy instead of the text again (written at the write
price, then read every turn beside the old copy); when it changed meanwhile, a diff against
that copy where the diff is small. `read_current_files` proves from the request alone that
the model is told the right text either way.
"""

from __future__ import annotations

from contextcore.prompt.appendonly import stale_tokens
from tests.contextcore.prompt.exchanges import BODY, selecting, text, turn
from tests.current_files import read_current_files

OTHER = "".join(f"def helper_{i}():\n    return {i}\n\n" for i in range(120))


def _manager(make_manager, tmp_path):
    return selecting(make_manager, tmp_path, {"app.py": BODY, "other.py": OTHER})


def _joined(messages) -> str:
    return "\n".join(text(m) for m in messages)


def _dropped_then(manager) -> list:
    turn(manager, "Read both.", 0.0)
    manager.file_context.remove_file("app.py")
    dropped = turn(manager, "Only other.py now.", 30.0)
    assert "app.py was removed from the context" in _joined(dropped)
    assert "app.py" not in read_current_files(dropped)
    assert manager.file_context.add_file("app.py").ok
    return turn(manager, "app.py again, please.", 60.0)


def test_an_unchanged_file_selected_again_is_a_notice_not_a_second_copy(make_manager, tmp_path):
    manager = _manager(make_manager, tmp_path)
    back = _dropped_then(manager)

    assert _joined(back).count(BODY) == 1  # the first copy only
    assert "app.py is back in the context, unchanged" in _joined(back)
    assert read_current_files(back) == {"app.py": BODY, "other.py": OTHER}
    assert manager.stability.layout.presented()["file:app.py"].form == "restored"


def test_the_restored_copy_is_not_counted_stale_and_an_edit_after_it_is_a_diff(
    make_manager, tmp_path
):
    manager = _manager(make_manager, tmp_path)
    _dropped_then(manager)
    stale = stale_tokens(manager.stability.layout, manager.counter)
    assert stale < manager.counter.count_text(BODY) / 10  # the old manifests only

    edited = BODY.replace("value * 7\n", "value * 77\n")
    (tmp_path / "app.py").write_text(edited)
    after = turn(manager, "And after my edit?", 90.0)

    assert "diff against version 1" in _joined(after)
    assert _joined(after).count(BODY) == 1
    assert read_current_files(after)["app.py"] == edited


def test_a_file_edited_while_dropped_comes_back_as_a_diff_against_its_old_copy(
    make_manager, tmp_path
):
    manager = _manager(make_manager, tmp_path)
    turn(manager, "Read both.", 0.0)
    manager.file_context.remove_file("app.py")
    turn(manager, "Only other.py now.", 30.0)
    edited = BODY.replace("value * 9\n", "value * 99\n")
    (tmp_path / "app.py").write_text(edited)
    assert manager.file_context.add_file("app.py").ok
    back = turn(manager, "app.py again, edited.", 60.0)

    assert "app.py (version 2, diff against version 1)" in _joined(back)
    assert _joined(back).count(BODY) == 1 and edited not in _joined(back)
    assert read_current_files(back)["app.py"] == edited
