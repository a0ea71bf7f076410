"""The model's tools' news for the Files panel is the rows they touched, drawn on the
server: each named file's row whole (box, pin, flash), the folders above it in their three
states and the total; the rows it did not touch are not in it. A file the model's edits
wrote gets its git badge as one cell."""

from __future__ import annotations

import re

import pytest

from chat.session.sets import Selection
from chat.web.panels.fileupdates import picker_update, row_key
from chat.web.panels.selection import sets_update
from tests.chat.web.pickerhtml import answer_states as states
from tests.chat.web.pickerhtml import file_row as row


@pytest.fixture
def repo_files():
    return {
        "lib/a.py": "def a():\n    return 1\n",
        "lib/deep/b.py": "def b():\n    return 2\n",
        "lib/deep/c.py": "def c():\n    return 3\n",
        "README.md": "# Readme\n",
    }


def test_the_tools_news_draws_the_rows_it_names_their_folders_and_the_total(root, served):
    chosen = Selection(
        frozenset({"lib/deep/b.py", "lib/a.py"}), pinned=frozenset({"lib/deep/b.py"}), budget=9000
    )
    frame = sets_update(served.files, root, ["lib/deep/b.py"], chosen, turn_id="t7")
    carrier = frame[: frame.index("</div>")]
    assert 'data-selection=""' in carrier and 'data-turn="t7"' in carrier
    assert states(frame) == {
        row_key("lib/deep/b.py"): "on",
        row_key("lib/deep"): "some",
        row_key("lib"): "some",
    }
    drawn = row(frame, "lib/deep/b.py")
    assert " flash" in drawn.split('"')[1] and " checked" in drawn
    assert 'aria-pressed="true" aria-label="Unpin lib/deep/b.py"' in drawn
    assert 'data-row="lib/a.py"' not in frame and row_key("README.md") not in frame
    assert "2 selected" in frame and "of 9,000 tokens" in frame


def test_a_file_taken_out_by_the_engine_is_drawn_off_without_a_flash(root, served):
    chosen = Selection(frozenset({"lib/a.py"}))
    frame = sets_update(served.files, root, ["lib/deep/c.py"], chosen, flash=False)
    assert states(frame)[row_key("lib/deep/c.py")] == "off"
    drawn = row(frame, "lib/deep/c.py")
    assert "flash" not in drawn.split('"')[1] and " checked" not in drawn
    assert 'data-folder="lib/deep" data-sel="none"' in frame
    assert 'data-folder="lib" data-sel="some"' in frame


def test_a_named_file_gone_from_the_listing_has_no_row(root, served):
    frame = sets_update(served.files, root, ["gone.py"], Selection(frozenset()))
    assert 'data-row="gone.py"' not in frame and "0 selected" in frame


def test_written_files_get_their_git_badge_as_one_cell_each(root, served):
    frame = picker_update(served.files, root, badges={"README.md": "M", "lib/a.py": ""})
    assert (
        f'<i id="b{row_key("README.md")}" hx-swap-oob="innerHTML"><span class="badge git git-M"'
        in frame
    )
    assert f'<i id="b{row_key("lib/a.py")}" hx-swap-oob="innerHTML"></i>' in frame
    assert "data-row" not in frame


def test_a_file_new_on_disk_comes_with_its_row_in_its_place_and_one_already_listed_without(
    root, served
):
    from chat.web.panels.tree import file_rows

    panel, listings = served.files, served.files.listings
    listings.of(root)
    (root / "lib" / "new.py").write_text("NEW = 1\n")
    (root / "README.md").write_text("# Changed\n")
    present = ["README.md", "lib/new.py"]
    assert listings.unlisted(root, present) == ["lib/new.py"]
    frame = picker_update(panel, root, added=present, rows=file_rows(panel, root, ["lib/new.py"]))
    new = re.search(rf'<div id="n{row_key("lib/new.py")}"([^>]*)>(.*?)</div>\s*</div>', frame, re.S)
    assert new, frame
    # After the folder's next file, lib/x.py would be; lib holds none after it: at its end.
    assert f'hx-swap-oob="beforeend:#g{row_key("lib")}"' in new.group(1)
    assert 'data-row="lib/new.py"' in new.group(2) and " checked" not in new.group(2)
    assert f'id="n{row_key("README.md")}"' not in frame  # the pages have its row
    assert 'data-added="[&quot;README.md&quot;, &quot;lib/new.py&quot;]"' in frame


def test_a_new_file_keeps_its_row_when_another_reader_read_the_listing_first(root, served):
    listings = served.files.listings
    listings.of(root)  # what the pages were drawn from
    (root / "lib" / "fresh.py").write_text("NEW = 1\n")
    listings.of(root)  # a panel's rows read the listing again before the watcher's news
    assert listings.unlisted(root, ["lib/fresh.py"]) == ["lib/fresh.py"]  # its row still goes out
    listings.announce(root, ["lib/fresh.py"])
    assert listings.unlisted(root, ["lib/fresh.py"]) == []  # once
    (root / "lib" / "fresh.py").unlink()
    listings.announce(root, [], ["lib/fresh.py"])
    (root / "lib" / "fresh.py").write_text("NEW = 2\n")
    assert listings.unlisted(root, ["lib/fresh.py"]) == ["lib/fresh.py"]  # made again: drawn again


def test_a_file_in_a_folder_new_to_the_listing_asks_the_pages_for_their_tree_again(root, served):
    from chat.web.panels.tree import file_rows

    panel, listings = served.files, served.files.listings
    listings.of(root)
    (root / "lib" / "y.py").write_text("Y = 1\n")
    shown = listings.known_folders(root)
    rows = file_rows(panel, root, ["lib/y.py"])
    frame = picker_update(panel, root, added=["lib/y.py"], rows=rows, shown=shown)
    assert " data-redraw" not in frame  # its folder's group takes the row
    (root / "fresh").mkdir()
    (root / "fresh" / "x.py").write_text("X = 1\n")
    shown = listings.known_folders(root)
    rows = file_rows(panel, root, ["fresh/x.py"])  # reads the listing again: `shown` is from before
    frame = picker_update(panel, root, added=["fresh/x.py"], rows=rows, shown=shown)
    assert " data-redraw" in frame
