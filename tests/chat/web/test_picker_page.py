"""The Files panel comes with the session's page, drawn on the server (its rows, folders
open as the first view opens them, and the running total), and a pin pressed in it is
answered with that pin drawn again and the total naming the sets now held."""

from __future__ import annotations

import re

import pytest

from chat.web.panels.fileupdates import row_key

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("served_root")]


@pytest.fixture
def repo_files():
    return {"README.md": "# Readme\n", "src/app.py": "print('hi')\n", "src/deep/b.py": "B = 2\n"}


def test_the_session_page_holds_the_files_panel_rows_and_total(client, session):
    html = client.get(f"/s/{session.id}/").content.decode()
    tree = html[html.index('id="file-tree-root"') : html.index('id="file-tree"')]
    for path in ("README.md", "src/app.py", "src/deep/b.py"):
        assert f'data-row="{path}"' in tree
    assert 'aria-expanded="true" data-folder-row="src"' in tree  # a small tree opens whole
    assert html.count('id="picker-total"') == 1 and "hx-swap-oob" not in tree
    assert re.search(r'id="picker-total"[^>]*>0 selected', html)


def test_a_pin_from_the_panel_is_answered_with_the_pin_and_the_total(client, session):
    url = f"/s/{session.id}/files/pin/"
    answer = client.post(url, {"path": "README.md", "pinned": "true"}, HTTP_HX_REQUEST="true")
    html = answer.content.decode()
    pin = re.search(rf'<button type="button" id="p{row_key("README.md")}"[^>]*>', html)[0]
    assert 'hx-swap-oob="true"' in pin and 'aria-pressed="true"' in pin
    assert 'aria-label="Unpin README.md"' in pin
    total = re.search(r'<p class="picker-total[^>]*>', html)[0]
    assert 'hx-swap-oob="true"' in total and re.search(r'data-sets="\w+"', total)
    assert "data-row=" not in html  # the pin alone, not its row
