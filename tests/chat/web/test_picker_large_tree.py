"""The Files panel on a repository too large to open whole: the first view opens only the
folders holding a selected file or one git reports changed, names wrap at their separators
(a <wbr> after "/", "_", "-", "."), and a pin answers with the sets' new name, so the
follower's news naming them does not draw the whole tree again."""

from __future__ import annotations

import re
import subprocess

import pytest

from chat.repo import sessionsets
from tests import serving

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("served_root")]

FOLDERS = 40  # more than a tree that opens whole holds


@pytest.fixture
def repo_files():
    files = {f"pkg{i:02}/mod{i}.py": f"def f{i}():\n    return {i}\n" for i in range(FOLDERS)}
    files["pkg00/deep/inner/x.py"] = "X = 1\n"
    files["pkg01/sub/long_module-name.v2.py"] = "Y = 2\n"
    files["pkg02/my_sub/z.py"] = "Z = 3\n"
    return files


@pytest.fixture
def repo_is_git() -> bool:
    return True


@pytest.fixture
def committed(served_root):
    git = ["git", "-C", str(served_root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "files"], check=True)
    (served_root / "pkg02" / "my_sub" / "z.py").write_text("Z = 4\n")  # changed: M
    return served_root


def test_a_large_tree_opens_only_the_folders_of_selected_and_changed_files(
    client, session, committed
):
    sessionsets.set_active_files(
        session, ["pkg01/sub/long_module-name.v2.py"], repo=serving.repository()
    )
    html = client.get(f"/s/{session.id}/files/rows/").content.decode()
    folders = _states(html)
    assert {f for f, state in folders.items() if state == "true"} == {
        "pkg01",
        "pkg01/sub",
        "pkg02",
        "pkg02/my_sub",
    }
    assert len(folders) == FOLDERS + 2  # the top folders and the open ones' subfolders
    assert 'data-row="pkg02/my_sub/z.py"' in html and 'data-row="pkg01/mod1.py"' in html
    assert 'data-row="pkg00/mod0.py"' not in html and "pkg00/deep/inner" not in html
    # Names wrap at their separators, never mid-word.
    assert ">long_<wbr>module-<wbr>name.<wbr>v2.<wbr>py</span>" in html
    assert '<span class="name">my_<wbr>sub/</span>' in html


def test_a_pin_answers_with_the_name_of_the_sets_the_followers_news_will_name(
    client, session, committed
):
    url = f"/s/{session.id}/files/rows/"
    before = _sets(client.get(url, {"total": "1"}).content.decode())
    answer = client.post(f"/s/{session.id}/files/pin/", {"path": "pkg03/mod3.py", "pinned": "true"})
    assert answer.status_code == 200 and answer.json()["pinned"] == ["pkg03/mod3.py"]
    after = _sets(client.get(url, {"total": "1"}).content.decode())
    assert answer.json()["sets"] == after != before


def _states(html: str) -> dict[str, str]:
    found = re.findall(r'aria-expanded="(true|false)" data-folder-row="([^"]+)"', html)
    return {folder: state for state, folder in found}


def _sets(html: str) -> str:
    return re.search(r'id="picker-total"[^>]*data-sets="(\w+)"', html).group(1)
