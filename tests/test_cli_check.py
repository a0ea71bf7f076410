"""`acdc chat --apply --check NAME` through the `acdc serve` of the repository, end to end.

The server reaches an OpenAI-compatible loopback fake through the real litellm path; the
terminal has no provider variable. The repository is a tiny Python project whose check
(`python3 check.py`, declared with `acdc commands add`) fails; it runs in real bubblewrap.
The model's first edit leaves it failing, its output goes back once, the fix round's edit
applies and the check runs again: exit 0 when that run passed, 1 when it still fails, and 2
with one line (nothing sent) for a name that is not declared. Without a server, `acdc
chat` does the same in its own process.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bench.live_server import make_repo
from bench.wirefakes import Reply, WireFake
from tests.served_with_fake import edit as edit_file
from tests.served_with_fake import server_with_fake, terminal
from tests.test_cli_edits_wire import chat as in_process

BROKEN = "def add(a, b):\n    return a - b\n"
CHECK = (
    'from calc import add\n\nassert add(2, 3) == 5, f"add(2, 3) gave {add(2, 3)}"\nprint("ok")\n'
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("served-check")
    repo = make_repo(folder / "repo", files=1)
    (repo / "calc.py").write_text(BROKEN)
    (repo / "check.py").write_text(CHECK)
    data = folder / "data"
    with server_with_fake(repo, data, folder / "serve.log") as (_, fake):
        # -B: no bytecode cache, whose timestamps are whole seconds (an edit of the same
        # size within the second would run the old code).
        argv = ("python3", "-B", "check.py")
        declared = acdc(repo, data, "commands", "add", "test", "--", *argv)
        assert declared.returncode == 0, declared.stderr
        yield fake, repo, data


def acdc(repo: Path, data: Path, *args: str, as_server: bool = True) -> subprocess.CompletedProcess:
    """An acdc command; `as_server`: with the bench server's database, the SQLite file in
    `data` (that server is started without DATABASE_URL, so what it reads must be there);
    else the terminal's own (DATABASE_URL when CI sets it), as the in-process chat uses."""
    environ = terminal(repo, data)
    for name in ("DATABASE_URL", "REDIS_URL") if as_server else ():
        environ.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "acdc", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


def edit(old: str, new: str) -> Reply:
    return edit_file("calc.py", old, new)


def user_texts(data: Path, session: str) -> list[str]:
    with sqlite3.connect(data / "acdc.sqlite3") as database:
        rows = database.execute(
            "SELECT content FROM history_message WHERE session_id = ? AND role = 'user' "
            "ORDER BY seq",
            (session,),
        ).fetchall()
    return [row[0] for row in rows]


def check_messages(data: Path, session: str) -> list[tuple[str, str]]:
    """The session's tool messages of checks: (status, content), in order."""
    with sqlite3.connect(data / "acdc.sqlite3") as database:
        rows = database.execute(
            "SELECT content, edit_results FROM history_message WHERE session_id = ? "
            "AND role = 'tool' ORDER BY seq",
            (session,),
        ).fetchall()
    found = [(json.loads(results)[0], content) for content, results in rows]
    return [(d["status"], content) for d, content in found if d["tool"] == "check"]


def test_a_failing_check_goes_back_once_and_the_fix_makes_it_pass(served):
    fake, repo, data = served
    (repo / "calc.py").write_text(BROKEN)
    fake.enqueue(
        edit("a - b", "a * b"),
        Reply("Changed the operator."),
        edit("a * b", "a + b"),
        Reply("Fixed: it adds now."),
    )
    asked = len(fake.requests)

    result = acdc(repo, data, "chat", "--new", "--apply", "--check", "test", "make add right")

    assert result.returncode == 0, result.stderr
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    lines = result.stderr.splitlines()
    failed = next(i for i, x in enumerate(lines) if x.startswith("acdc: check test: failed, "))
    assert re.fullmatch(r"acdc: check test: failed, exit status 1 after \d+\.\d s", lines[failed])
    assert "AssertionError: add(2, 3) gave 6" in "\n".join(lines[failed:])
    assert "acdc: asking the model to fix what test reported (once)" in lines
    passed = r"^acdc: check test: passed, exit status 0 after \d+\.\d s$"
    assert re.search(passed, result.stderr, re.M)
    assert "Changed the operator." in result.stdout and "Fixed: it adds now." in result.stdout
    # The fix round is a turn of its own: acdc's message with the cut output, appended.
    session = re.search(r"session: (\S+)", result.stderr).group(1)
    first, fix = user_texts(data, session)
    assert first == "make add right"
    assert fix.startswith("acdc ran the check `test` (`python3 -B check.py`) after your edits ")
    assert "AssertionError: add(2, 3) gave 6" in fix
    requests = fake.requests[asked:]
    assert len(requests) == 4  # two per turn: the edit, then the answer to its result
    assert requests[2].body["messages"][-1]["content"] == fix
    assert [status for status, _ in check_messages(data, session)] == ["fail", "ok"]
    exported = acdc(repo, data, "export", session)  # each run, as the tool message it is
    assert exported.returncode == 0, exported.stderr
    assert "$ python3 -B check.py\nexit status 1 after " in exported.stdout
    assert "$ python3 -B check.py\nexit status 0 after " in exported.stdout


def test_a_fix_that_does_not_help_exits_1_after_one_round(served):
    fake, repo, data = served
    (repo / "calc.py").write_text(BROKEN)
    fake.enqueue(
        edit("a - b", "a * b"),
        Reply("Changed it."),
        edit("a * b", "a ** b"),
        Reply("Changed it again."),
    )
    asked = len(fake.requests)

    result = acdc(repo, data, "chat", "--new", "--apply", "--check", "test", "make add right")

    assert result.returncode == 1, result.stderr
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a ** b\n"
    assert result.stderr.count("acdc: check test: failed, exit status 1 after ") == 2
    assert "AssertionError: add(2, 3) gave 8" in result.stderr
    assert result.stderr.count("asking the model to fix") == 1
    assert len(fake.requests) - asked == 4  # one round to fix, never a second
    session = re.search(r"session: (\S+)", result.stderr).group(1)
    assert [status for status, _ in check_messages(data, session)] == ["fail", "fail"]


def test_an_unknown_check_is_one_line_and_exit_2_with_nothing_sent(served):
    fake, repo, data = served
    asked = len(fake.requests)

    result = acdc(repo, data, "chat", "--new", "--apply", "--check", "tset", "hello")

    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "acdc: error: --check 'tset': there is no declared command of that name; declared: test"
    )
    assert len(fake.requests) == asked
    without_apply = acdc(repo, data, "chat", "--check", "test", "hello")
    assert without_apply.returncode == 2
    assert "--check needs --apply" in without_apply.stderr


@pytest.fixture
def repo_files() -> dict[str, str]:
    return {"calc.py": BROKEN, "check.py": CHECK}


def test_in_process_without_a_server_the_same_round(root, tmp_path):
    data = tmp_path / "data"
    argv = ("python3", "-B", "check.py")
    declared = acdc(root, data, "commands", "add", "test", "--", *argv, as_server=False)
    assert declared.returncode == 0, declared.stderr
    with WireFake() as fake:
        fake.enqueue(
            edit("a - b", "a * b"),
            Reply("Changed."),
            edit("a * b", "a + b"),
            Reply("Fixed."),
        )
        result = in_process(fake, root, data, "--new", "--apply", "--check", "test", "fix add")
        assert len(fake.requests) == 4

    assert result.returncode == 0, result.stderr
    assert "through the server" not in result.stderr
    assert result.stderr.count("acdc: check test: failed, exit status 1 after ") == 1
    assert result.stderr.count("acdc: check test: passed, exit status 0 after ") == 1
    assert (root / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_without_a_sandbox_the_check_is_one_line_and_exit_2(root, tmp_path):
    data = tmp_path / "data"
    argv = ("python3", "-B", "check.py")
    declared = acdc(root, data, "commands", "add", "test", "--", *argv, as_server=False)
    assert declared.returncode == 0, declared.stderr
    with WireFake() as fake:
        environ = {**terminal(root, data), "PATH": str(tmp_path / "no-programs")}
        environ |= {"ACDC_MODEL": "openai/x", "ACDC_API_BASE": fake.base_url + "/v1"}
        environ["OPENAI_API_KEY"] = "sk-test"
        result = subprocess.run(
            [sys.executable, "-m", "acdc", "chat", "--new", "--apply", "--check", "test", "hi"],
            capture_output=True,
            text=True,
            env=environ,
            timeout=180,
        )
        assert fake.requests == []

    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines()[-1] == (
        "acdc: error: --check 'test': bwrap (Debian's bubblewrap) is not installed, so every "
        "command needs the person's approval and none runs by itself (install bubblewrap)"
    )
