"""`acdc chat` sends the project instructions as the page does, and --no-instructions stops it
(through the entry point in this process: tests/cli_inprocess.py)."""

from __future__ import annotations

import json
import re

import pytest

from tests.cli_inprocess import cli_fixture  # noqa: F401 (the `cli` fixture)


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


@pytest.mark.django_db(transaction=True)
def test_chat_sends_them_and_the_flag_switches_them_off_for_the_session(cli, tmp_path):
    record = tmp_path / "requests.jsonl"
    env = {"ACDC_RECORD_REQUESTS": str(record)}
    first = cli("chat", "--new", "--model", "acdc/fake", "hello", **env)
    assert first.returncode == 0, first.stderr
    assert "## CLAUDE.md\n\nAnswer in haiku." in system_of(record)
    session = re.search(r"session: (\S+)", first.stderr).group(1)

    off = cli("chat", "--session", session, "--no-instructions", "again", **env)
    assert off.returncode == 0, off.stderr
    assert "Answer in haiku." not in system_of(record)

    kept = cli("chat", "--session", session, "still off?", **env)
    assert kept.returncode == 0, kept.stderr
    assert "Answer in haiku." not in system_of(record)

    back = cli("chat", "--session", session, "--instructions", "back on", **env)
    assert back.returncode == 0, back.stderr
    assert "Answer in haiku." in system_of(record)
