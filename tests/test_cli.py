"""The `acdc` command line: what it parses, prints and returns, through its entry point in
this process (`cli`, tests/cli_inprocess.py), and as a user runs it, a separate process
(`acdc`), where the process is the subject: its start (the settings it reads, the files it
makes), `python -m acdc`, a closed pipe, and one run of each command."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_inprocess import cli_fixture  # noqa: F401 (the `cli` fixture)
from tests.current_files import read_current_files

in_process = pytest.mark.django_db(transaction=True)  # the command's threads see its rows


@pytest.fixture
def repo_files() -> dict[str, str]:
    return {"main.py": "print('hi')\n"}


@pytest.fixture
def repo_is_git() -> bool:
    return True


def acdc(*args: str, repo: Path | None = None, **env: str | None) -> subprocess.CompletedProcess:
    """`acdc *args` in a process of its own; `env` adds variables (None takes one away)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ACDC_")}
    environ.pop("DJANGO_SETTINGS_MODULE", None)
    if repo is not None:
        environ["ACDC_REPO"] = str(repo)
    environ.update({k: v for k, v in env.items() if v is not None})
    for name in [k for k, v in env.items() if v is None]:
        environ.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "acdc", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
    )


def test_chat_new_prints_the_reply_and_the_session_id(root):
    result = acdc("chat", "--new", "--model", "acdc/fake", "hi", repo=root)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Fake reply to: hi"
    assert re.search(r"^session: sess_\d+_[0-9a-f]{6}$", result.stderr, re.M)
    if not os.environ.get("DATABASE_URL"):  # the embedded default; PostgreSQL otherwise
        assert (root / ".acdc" / "acdc.sqlite3").exists()
    assert ".acdc/" in (root / ".git" / "info" / "exclude").read_text()


@in_process
def test_chat_continues_a_session_with_its_history(cli, tmp_path):
    record = tmp_path / "requests.jsonl"
    first = cli("chat", "--new", "--model", "acdc/fake", "remember the word kumquat")
    session_id = re.search(r"session: (\S+)", first.stderr).group(1)
    second = cli(
        "chat",
        "--session",
        session_id,
        "--model",
        "acdc/dry-run",
        "what word?",
        ACDC_RECORD_REQUESTS=str(record),
    )
    assert second.returncode == 0, second.stderr
    assert f"session: {session_id}" in second.stderr
    assert second.stdout.startswith("## Dry run")
    sent = json.dumps(json.loads(record.read_text().splitlines()[-1])["messages"])
    assert "remember the word kumquat" in sent and "Fake reply to: remember" in sent
    third = cli("chat", "--model", "acdc/fake", "latest session by default")
    assert f"session: {session_id}" in third.stderr


@in_process
def test_an_unknown_session_is_a_one_line_error(cli):
    result = cli("chat", "--session", "sess_1_abcdef", "hi")
    assert result.returncode == 2
    assert result.stderr.strip().startswith("acdc: error: there is no session")
    assert "Traceback" not in result.stderr


def test_a_missing_repository_is_a_one_line_error(tmp_path):
    result = acdc("chat", "--repo", str(tmp_path / "nope"), "hi")
    assert result.returncode == 2
    assert result.stderr.strip() == f"acdc: error: ACDC_REPO: {tmp_path / 'nope'} does not exist"


@in_process
def test_an_unknown_model_is_reported_on_stderr(cli):
    result = cli("chat", "--new", "--model", "nonexistent-provider/xyz", "hi")
    assert result.returncode == 1
    assert "acdc: error:" in result.stderr and "nonexistent-provider/xyz" in result.stderr
    assert "Traceback" not in result.stderr


def test_python_dash_m_acdc_shows_help():
    result = acdc("--help")
    assert result.returncode == 0
    assert "serve" in result.stdout and "chat" in result.stdout


@in_process
def test_add_and_drop_change_the_selection_the_next_request_carries(cli, tmp_path):
    record = tmp_path / "requests.jsonl"
    env = {"ACDC_RECORD_REQUESTS": str(record)}
    result = cli("chat", "--new", "--model", "acdc/fake", "--add", "main.py", "look", **env)
    assert result.returncode == 0, result.stderr
    first = json.loads(record.read_text().splitlines()[-1])
    assert read_current_files(first["messages"]) == {"main.py": "print('hi')\n"}

    result = cli(
        "chat",
        "--model",
        "acdc/fake",
        "--drop",
        "main.py",
        "again",
        **env,
    )
    assert result.returncode == 0, result.stderr
    second = json.loads(record.read_text().splitlines()[-1])
    assert "main.py" not in read_current_files(second["messages"])


@in_process
def test_adding_a_path_that_does_not_exist_is_an_error_before_anything_is_sent(cli, tmp_path):
    record = tmp_path / "requests.jsonl"
    env = {"ACDC_RECORD_REQUESTS": str(record)}
    for choice in (["--add", "missing.py"], ["--pin", "missing.py"], ["--add", ".git/config"]):
        result = cli("chat", "--new", "--model", "acdc/fake", *choice, "look", **env)
        assert result.returncode == 2, result.stderr
        assert "nothing was sent" in result.stderr and "session:" not in result.stderr
        assert not record.exists()
    assert (
        "missing.py: no such file"
        in cli("chat", "--new", "--model", "acdc/fake", "--add", "missing.py", "x").stderr
    )


@in_process
def test_a_secret_shaped_file_is_sent_only_with_allow_secret(cli, root, tmp_path):
    (root / ".env").write_text("TOKEN=abc\n")
    record = tmp_path / "requests.jsonl"
    env = {"ACDC_RECORD_REQUESTS": str(record)}
    refused = cli("chat", "--new", "--model", "acdc/fake", "--add", ".env", "look", **env)
    assert refused.returncode == 2 and not record.exists()
    assert "add --allow-secret .env to send it" in refused.stderr

    allowed = cli(
        "chat", "--new", "--model", "acdc/fake", "--add", ".env", "--allow-secret", ".env",
        "look", **env,
    )  # fmt: skip
    assert allowed.returncode == 0, allowed.stderr
    sent = json.loads(record.read_text().splitlines()[-1])
    assert ".env" in read_current_files(sent["messages"])


@in_process
def test_pin_and_unpin_act_on_the_session_sets(cli, root, tmp_path):
    (root / "notes.md").write_text("# Notes\n")
    record = tmp_path / "requests.jsonl"
    env = {"ACDC_RECORD_REQUESTS": str(record)}
    result = cli(
        "chat", "--new", "--model", "acdc/fake", "--add", "main.py", "--pin", "main.py",
        "--pin", "notes.md", "look", **env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    session_id = re.search(r"session: (\S+)", result.stderr).group(1)
    sent = json.dumps(json.loads(record.read_text().splitlines()[-1])["messages"])
    # Both files are in the metadata pool; only main.py was read and is active.
    assert "path=main.py file_type=py char_count=12" in sent
    assert "path=notes.md file_type=md [unread]" in sent

    result = cli(
        "chat", "--session", session_id, "--model", "acdc/fake", "--unpin", "notes.md",
        "--unpin", "never.md", "again",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "acdc: never.md was not pinned" in result.stderr
    assert "notes.md" not in result.stderr  # it was pinned, so unpinning it is no refusal


def test_output_piped_into_a_closed_pipe_ends_quietly(root):
    command = f"{sys.executable} -m acdc chat --new --model acdc/dry-run hello | head -1"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ACDC_")}
    environ["ACDC_REPO"] = str(root)
    result = subprocess.run(
        command, shell=True, capture_output=True, text=True, env=environ, timeout=120
    )
    assert "Traceback" not in result.stderr


@in_process
def test_import_history_then_export_round_trips_a_session(cli, root, tmp_path):
    # Fresh ids each run: with DATABASE_URL set the command writes to that shared database,
    # so fixed ids would already be present on the second run.
    tag = secrets.token_hex(4)
    session_id = f"sess_1700000000000_{tag[:6]}"
    first_id, second_id = f"1700000000000-{tag}", f"1700000000001-{tag}"
    source = tmp_path / "history.jsonl"
    lines = [
        {
            "id": first_id,
            "session_id": session_id,
            "timestamp": "2023-11-14T22:13:20Z",
            "role": "user",
            "content": "How does it work?",
        },
        "{corrupt",
        {
            "id": second_id,
            "session_id": session_id,
            "timestamp": "2023-11-14T22:13:25Z",
            "role": "assistant",
            "content": "Like this.",
        },
    ]
    source.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines))
    result = cli("import-history", str(source), "--repo", str(root))
    assert result.returncode == 0, result.stderr
    assert "imported 2 messages (1 new session)" in result.stderr
    assert "skipped 1 line that could not be stored:\n  1 not JSON (line 2)" in result.stderr
    again = cli("import-history", str(source), "--repo", str(root))
    assert "imported 0 messages" in again.stderr and "2 already present" in again.stderr

    exported = cli("export", session_id, "--format", "jsonl")
    assert exported.returncode == 0, exported.stderr
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [r["id"] for r in rows] == [first_id, second_id]
    markdown = cli("export", session_id)
    assert "How does it work?" in markdown.stdout and "Like this." in markdown.stdout
    missing = acdc("export", "sess_nope", repo=root)  # export, run as a process once
    assert missing.returncode == 2 and "no session" in missing.stderr


def test_import_history_of_a_missing_file_is_a_clear_error(root, tmp_path):
    result = acdc("import-history", str(tmp_path / "nope.jsonl"), "--repo", str(root))
    assert result.returncode == 2
    assert "is not a file" in result.stderr and "Traceback" not in result.stderr


@in_process
def test_the_command_line_compacts_after_a_turn_past_the_trigger(cli, tmp_path):
    script = tmp_path / "script.json"
    summary = {"text": "They walked through the lexer.", "purpose": "history_summary"}
    script.write_text(json.dumps([summary]))
    env = {
        "ACDC_COMPACTION_TRIGGER_TOKENS": "300",
        "ACDC_VERBATIM_WINDOW_TOKENS": "100",
        "ACDC_CHECKPOINT_EVERY": "0",
        "ACDC_FAKE_SCRIPT": str(script),
    }
    long = "Walk me through the tokenizer cache, the lexer and the parser. " * 5
    first = cli("chat", "--new", "--model", "acdc/fake", f"one {long}", **env)
    session_id = re.search(r"session: (\S+)", first.stderr).group(1)
    stderr = ""
    for n in range(2, 6):
        result = cli("chat", "--session", session_id, "--model", "acdc/fake", f"{n} {long}", **env)
        assert result.returncode == 0, result.stderr
        stderr += result.stderr
    # The fake answers the detector with an echo (no usable JSON: the safe boundary) and
    # the summary from the script (unscripted, it writes none); the compaction says what it did.
    assert "acdc: compacting the history…" in stderr
    assert "History compacted (summarized)" in stderr and "→" in stderr
