"""`acdc chat --apply`, with `acdc/fake` scripted to propose edits: run as a user runs it (a
process) once, and through the entry point in this process (tests/cli_inprocess.py) for
what it prints and returns."""

from __future__ import annotations

import asyncio
import errno
import json
import os

import pytest

from acdc import chatedits
from chat.llm.facts import PROVIDER_KEYS
from chat.repo.edits import journal
from chat.repo.edits.proposing import propose
from contextcore.edits import EditOp
from history import services
from tests import serving
from tests.cli_inprocess import cli_fixture  # noqa: F401 (the `cli` fixture)
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


@pytest.mark.django_db(transaction=True)
def test_without_apply_the_edits_stay_pending_and_the_status_says_so(cli, root, tmp_path):
    env = scripted(tmp_path, "print('hi')")
    result = cli("chat", "--new", "--model", "acdc/fake", "go", **env)
    assert result.returncode == 1, result.stderr
    assert (root / "main.py").read_text() == "print('hi')\n"
    assert "acdc: pending review: main.py, +1 −1" in result.stderr
    assert "+print('bye')" in result.stdout  # shown as it would apply


@pytest.mark.django_db(transaction=True)
def test_an_edit_that_cannot_apply_fails_the_exit_status(cli, root, tmp_path):
    env = scripted(tmp_path, "print('not there')")
    result = cli("chat", "--new", "--model", "acdc/fake", "--apply", "go", **env)
    assert result.returncode == 1
    assert (root / "main.py").read_text() == "print('hi')\n"
    assert "acdc: failed: main.py: the old text was not found" in result.stderr
    assert "acdc: Nothing was written: the edit of main.py cannot apply" in result.stderr
    assert (root / "notes.md").read_text() == "# Notes\nold note\n"  # the reply applies whole


NO_KEYS: dict[str, str | None] = {name: None for name, _ in PROVIDER_KEYS}


@pytest.mark.django_db(transaction=True)
def test_apply_with_no_server_and_no_key_is_one_line_never_a_dry_run(cli, root, tmp_path):
    env = scripted(tmp_path, "print('hi')")
    result = cli("chat", "--new", "--apply", "go", **env, **NO_KEYS)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(
        "acdc: error: --apply: no model to write edits: no provider key (ANTHROPIC_API_KEY, "
    )
    assert "start `acdc serve` there" in result.stderr


@pytest.mark.django_db(transaction=True)
def test_apply_with_a_model_whose_key_is_missing_names_the_key(cli, root, tmp_path):
    env = scripted(tmp_path, "print('hi')")
    result = cli("chat", "--new", "--model", "openai/gpt-4.1", "--apply", "go", **env, **NO_KEYS)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "--apply: openai/gpt-4.1 needs OPENAI_API_KEY, which is not set here" in result.stderr


@pytest.mark.django_db(transaction=True)
def test_a_full_disk_while_applying_is_one_line_and_a_failed_status(root, settings, capsys):
    settings.ACDC_EDITS = True
    settings.ACDC_REPO = root
    session = services.session_create(repository=str(root), model="acdc/fake")
    said = services.message_append(session=session, role="assistant", content="ok", turn_id="t1")
    op = EditOp("main.py", "replace", "print('hi')", "print('bye')")
    propose(session, [op], repo=serving.repository(), turn_id="t1", message=said)

    def full_disk(handle, data: bytes) -> None:  # the disk is full: nothing is written
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    original = journal.write_set
    journal.write_set = lambda *a, **k: original(*a, **k, writer=full_disk)
    try:
        status = asyncio.run(chatedits.show(session.id, "t1", apply=True))
    finally:
        journal.write_set = original

    said = capsys.readouterr().err
    assert status == 1 and (root / "main.py").read_text() == "print('hi')\n"
    assert said.splitlines()[0].startswith("acdc: Nothing was written: No space left on device")
    assert "Traceback" not in said
