"""The Files panel's rows come drawn by the server: opening a folder fetches its children
with each row's state (selected, outline, pinned, count; a folder's three states), the
first view is the tree with the folders that matter open, and the filter's list is the
files named, best first, each with its folder."""

from __future__ import annotations

import re

import pytest

from chat.repo import sessionsets
from chat.web.panels.fileupdates import row_key
from tests import serving
from tests.chat.web.pickerhtml import file_row

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("served_root")]


@pytest.fixture
def repo_files():
    return {
        "lib/a.py": "def a():\n    return 1\n",
        "lib/deep/b.py": "def b():\n    return 2\n",
        "lib/deep/c.py": "def c():\n    return 3\n",
        "lib/mixed/e.py": "def e():\n    return 5\n",
        "lib/mixed/f.py": "def f():\n    return 6\n",
        "lib/logo.bin": b"\x89PNG\x00\x01" * 20,
        "other/d.py": "def d():\n    return 4\n",
        "README.md": "# Readme\n",
    }


@pytest.fixture
def repo_is_git() -> bool:
    return True


@pytest.fixture
def chosen(session, served_root, served):
    served.counts.count(served_root, ["lib/a.py", "lib/deep/b.py", "lib/logo.bin"])
    active = ["lib/deep/b.py", "lib/deep/c.py", "lib/mixed/e.py"]
    sessionsets.set_active_files(
        session, active, outlines=["lib/deep/c.py"], repo=serving.repository()
    )
    sessionsets.pin(session, "lib/a.py", repo=serving.repository())
    return session


def folder_states(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-folder="([^"]+)" data-sel="(\w+)"', html))


def test_opening_a_folder_returns_its_children_drawn_with_their_state(client, chosen):
    html = client.get(f"/s/{chosen.id}/files/rows/", {"folder": "lib"}).content.decode()
    # Its subfolders with their three states figured on the server, closed (not drawn).
    assert folder_states(html) == {"lib/deep": "all", "lib/mixed": "some"}
    assert re.search(r'data-folder="lib/deep" data-sel="all" checked', html)
    assert 'data-row="lib/deep/b.py"' not in html
    assert re.search(rf'id="g{row_key("lib/deep")}" hidden', html)
    assert f'hx-get="/s/{chosen.id}/files/rows/?folder=lib/deep"' in html
    # Its own files: not selected, pinned, counted; a binary file refused.
    a = file_row(html, "lib/a.py")
    assert "checked" not in a and 'aria-label="Unpin lib/a.py"' in a
    assert re.search(rf'id="t{row_key("lib/a.py")}" title="Tokens of the whole file">\d+<', a)
    logo = file_row(html, "lib/logo.bin")
    assert " disabled" in logo and ">binary<" in logo and "data-pin" not in logo
    # Nothing outside the folder.
    assert "other/d.py" not in html and "README.md" not in html


def test_a_folders_files_show_selected_outline_and_unknown_counts(client, chosen):
    html = client.get(f"/s/{chosen.id}/files/rows/", {"folder": "lib/deep"}).content.decode()
    b, c = file_row(html, "lib/deep/b.py"), file_row(html, "lib/deep/c.py")
    assert " checked" in b and " checked" in c
    assert 'class="outline-file on" data-outline="lib/deep/c.py" aria-pressed="true"' in c
    assert 'class="tokens unsent"' in c and ">…<" in c  # sent as its outline, not yet counted
    assert 'class="outline-file" data-outline="lib/deep/b.py" aria-pressed="false"' in b


def test_the_first_view_opens_a_small_tree_and_carries_the_total(client, chosen):
    html = client.get(f"/s/{chosen.id}/files/rows/").content.decode()
    assert folder_states(html) == {
        "lib": "some",
        "lib/deep": "all",
        "lib/mixed": "some",
        "other": "none",
    }
    assert 'data-row="lib/deep/b.py"' in html and 'data-row="README.md"' in html
    assert 'aria-expanded="true" data-folder-row="lib/deep"' in html
    total = re.search(r'<p class="picker-total[^"]*" id="picker-total"[^>]*>([^<]*)<', html)
    assert total and total.group(1).startswith("3 selected (1 as outline) · ≥ ")


def test_the_filters_list_is_the_files_named_in_order_with_their_folders(client, chosen):
    found = ["other/d.py", "lib/deep/b.py", "not/listed.py", "README.md"]
    html = client.post(f"/s/{chosen.id}/files/rows/", {"found": found}).content.decode()
    rows = re.findall(r'data-row="([^"]+)"', html)
    assert rows == ["other/d.py", "lib/deep/b.py", "README.md"]
    assert '<span class="folder-hint" aria-hidden="true">lib/<wbr>deep/</span>' in html
    assert "data-folder=" not in html
    assert html.count('class="folder-hint"') == 2  # a file at the top has no folder to name


def test_a_filter_with_nothing_found_says_no_match_only_once_the_page_has_the_paths(client, chosen):
    url = f"/s/{chosen.id}/files/rows/"
    coming = client.post(url, {"found": "", "matched": "0", "paths": "coming"}).content.decode()
    listed = client.post(url, {"found": "", "matched": "0", "paths": "in"}).content.decode()
    assert "Reading the list of files…" in coming and "No file matches" not in coming
    assert "No file matches the filter." in listed and "Reading the list" not in listed
