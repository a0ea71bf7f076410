"""`acdc chat` sends the project instructions as the page does, and --no-instructions stops it."""

from __future__ import annotations

import json
import re

import pytest

from tests.test_cli import acdc


@pytest.fixture
def repo_files() -> dict[str, str]:
    return {"main.py": "print('hi')\n", "CLAUDE.md": "Answer in haiku.\n"}


@pytest.fixture
def repo_is_git() -> bool:
    return True


def system_of(record) -> str:
    sent = json.loads(record.read_text().splitlines()[-1])["messages"][0]
    content = sent["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


def test_chat_sends_them_and_the_flag_switches_them_off_for_the_session(root, tmp_path):
    record = tmp_path / "requests.jsonl"
    env = {"ACDC_RECORD_REQUESTS": str(record)}
    first = acdc("chat", "--new", "--model", "acdc/fake", "hello", repo=root, **env)
    assert first.returncode == 0, first.stderr
    assert "## CLAUDE.md\n\nAnswer in haiku." in system_of(record)
    session = re.search(r"session: (\S+)", first.stderr).group(1)

    off = acdc("chat", "--session", session, "--no-instructions", "again", repo=root, **env)
    assert off.returncode == 0, off.stderr
    assert "Answer in haiku." not in system_of(record)

    kept = acdc("chat", "--session", session, "still off?", repo=root, **env)
    assert kept.returncode == 0, kept.stderr
    assert "Answer in haiku." not in system_of(record)

    back = acdc("chat", "--session", session, "--instructions", "back on", repo=root, **env)
    assert back.returncode == 0, back.stderr
    assert "Answer in haiku." in system_of(record)
