"""`acdc chat --apply`, run as a user runs it, with `acdc/fake` scripted to propose edits."""

from __future__ import annotations

import json

import pytest

from tests.test_cli import acdc

BLOCK = """Done.

notes.md
```
<<<<<<< SEARCH
old note
=======
new note
>>>>>>> REPLACE
```
"""


@pytest.fixture
def repo_files() -> dict[str, str]:
    return {"main.py": "print('hi')\n", "notes.md": "# Notes\nold note\n"}


@pytest.fixture
def repo_is_git() -> bool:
    return True


def scripted(tmp_path, old: str) -> dict[str, str]:
    """A reply that calls edit_file on main.py, then ends with a block for notes.md."""
    args = {"path": "main.py", "old_text": old, "new_text": "print('bye')"}
    steps = [
        {"tool_calls": [{"name": "edit_file", "arguments": args, "id": "e1"}]},
        {"text": BLOCK},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    return {"ACDC_FAKE_SCRIPT": str(script), "ACDC_EDITS": "1"}


def test_apply_applies_the_replys_edits_and_prints_them_as_diffs(root, tmp_path):
    env = scripted(tmp_path, "print('hi')")
    result = acdc("chat", "--new", "--model", "acdc/fake", "--apply", "go", repo=root, **env)
    assert result.returncode == 0, result.stderr
    assert (root / "main.py").read_text() == "print('bye')\n"
    assert (root / "notes.md").read_text() == "# Notes\nnew note\n"
    assert "--- a/main.py\n+++ b/main.py\n@@ -1 +1 @@\n-print('hi')\n+print('bye')\n" in (
        result.stdout
    )
    assert "-old note\n+new note\n" in result.stdout
    assert "\033[" not in result.stdout  # no colour off a terminal


def test_without_apply_the_edits_stay_pending_and_the_status_says_so(root, tmp_path):
    env = scripted(tmp_path, "print('hi')")
    result = acdc("chat", "--new", "--model", "acdc/fake", "go", repo=root, **env)
    assert result.returncode == 1, result.stderr
    assert (root / "main.py").read_text() == "print('hi')\n"
    assert "acdc: pending review: main.py, +1 −1" in result.stderr
    assert "+print('bye')" in result.stdout  # shown as it would apply


def test_an_edit_that_cannot_apply_fails_the_exit_status(root, tmp_path):
    env = scripted(tmp_path, "print('not there')")
    result = acdc("chat", "--new", "--model", "acdc/fake", "--apply", "go", repo=root, **env)
    assert result.returncode == 1
    assert (root / "main.py").read_text() == "print('hi')\n"
    assert "acdc: failed: main.py: the old text was not found" in result.stderr
    assert (root / "notes.md").read_text() == "# Notes\nnew note\n"  # its own set applied
