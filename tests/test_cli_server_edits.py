"""`acdc chat --apply` and `--commit` through the `acdc serve` of the repository.

The server holds the provider's variables (an OpenAI-compatible loopback fake, reached
through the real litellm path); the terminal that runs `acdc chat` has none of them, as a
person's second terminal often has not. The reply's edits apply on the server, the commit
is the server's too, and a hook acdc's edits changed (`core.hooksPath=.githooks`) runs only
when the person says so: without a word nothing is committed and the hook leaves no mark.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import pty
import re
import select
import sqlite3
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from bench.live_server import TOKEN, make_repo
from bench.wirefakes import Reply
from tests.served_with_fake import edit, server_with_fake, terminal

MODULE = "src/module_000.py"
HOOK = ".githooks/pre-commit"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("served-edits")
    repo = make_repo(folder / "repo", files=1)
    for setting in (("user.email", "dev@example.com"), ("user.name", "Dev")):
        git(repo, "config", *setting)
    (repo / ".githooks").mkdir()
    (repo / HOOK).write_text("#!/bin/sh\nexit 0\n")
    (repo / HOOK).chmod(0o755)
    git(repo, "config", "core.hooksPath", ".githooks")
    git(repo, "add", HOOK)
    git(repo, "commit", "-qm", "hooks")
    with server_with_fake(repo, folder / "data", folder / "serve.log") as (worker, fake):
        yield worker, fake, repo, folder / "data"


def chat(served, *args: str) -> subprocess.CompletedProcess:
    _, _, repo, data = served
    return subprocess.run(
        [sys.executable, "-m", "acdc", "chat", *args],
        capture_output=True,
        text=True,
        env=terminal(repo, data),
        timeout=180,
        stdin=subprocess.DEVNULL,  # no terminal to ask: the flags decide
    )


def test_apply_through_the_server_from_a_terminal_without_the_providers_key(served):
    _, fake, repo, _ = served
    before = (repo / MODULE).read_text()
    fake.enqueue(edit(MODULE, "def step_0(", "def renamed_0("), Reply("Renamed it."))

    result = chat(served, "--new", "--apply", "rename the first function")

    assert result.returncode == 0, result.stderr
    assert "through the server at 127.0.0.1" in result.stderr
    assert (repo / MODULE).read_text() == before.replace("def step_0(", "def renamed_0(")
    assert "-def step_0(" in result.stdout and "+def renamed_0(" in result.stdout
    told = json.dumps(fake.requests[-1].body["messages"][-1])  # the edit tool's result
    assert "written when your reply ends" in told  # as in-process --apply tells the model


def test_apply_and_commit_through_the_server_commit_acdcs_file_only(served):
    _, fake, repo, _ = served
    (repo / "notes.txt").write_text("the person's draft\n")
    fake.enqueue(edit(MODULE, "def step_1(", "def second_1("), Reply("Renamed again."))

    result = chat(served, "--new", "--apply", "--commit", "Rename step_1", "go on")

    assert result.returncode == 0, result.stderr
    assert f"acdc: committed {MODULE}: " in result.stderr
    assert git(repo, "show", "--name-only", "--format=%s", "HEAD") == (
        f"Rename step_1\n\n{MODULE}\n"
    )
    assert git(repo, "status", "--porcelain") == "?? notes.txt\n"


def test_a_hook_acdc_changed_runs_only_on_the_persons_word(served):
    worker, fake, repo, data = served
    fake.enqueue(edit(HOOK, "exit 0", "touch hook-ran"), Reply("Changed the hook."))
    proposed = chat(served, "--new", "make the hook do something")
    assert proposed.returncode == 1 and "pending review: .githooks/pre-commit" in proposed.stderr
    session = re.search(r"session: (\S+)", proposed.stderr).group(1)
    accept_in_the_page(worker.url, _reply_id(data, session))
    assert (repo / HOOK).read_text() == "#!/bin/sh\ntouch hook-ran\n"
    head = git(repo, "rev-parse", "HEAD")

    fake.enqueue(Reply("ok"))
    refused = chat(served, "--session", session, "--commit", "Hook", "commit it")
    assert refused.returncode == 1
    assert (
        "acdc: not committed: acdc's edits changed .githooks/pre-commit, which git would run "
        "on this commit; add --run-changed-hooks to run it, or --no-hooks" in refused.stderr
    )
    assert not (repo / "hook-ran").exists() and git(repo, "rev-parse", "HEAD") == head

    fake.enqueue(Reply("ok"))
    skipped = chat(served, "--session", session, "--no-hooks", "--commit", "Hook", "again")
    assert skipped.returncode == 0, skipped.stderr
    assert "acdc: committed .githooks/pre-commit (no hook ran): " in skipped.stderr
    assert not (repo / "hook-ran").exists()


def test_a_terminal_is_asked_about_a_changed_hook_and_yes_runs_it(served):
    worker, fake, repo, data = served
    last = (repo / HOOK).read_text().splitlines()[-1]
    fake.enqueue(edit(HOOK, last, "touch asked-and-ran"), Reply("Changed the hook."))
    proposed = chat(served, "--new", "change the hook")
    session = re.search(r"session: (\S+)", proposed.stderr).group(1)
    accept_in_the_page(worker.url, _reply_id(data, session))

    fake.enqueue(Reply("ok"))
    said, status = at_a_terminal(served, "y", "--session", session, "--commit", "Ask", "go")

    assert "acdc: acdc's edits changed .githooks/pre-commit, which git would run on this " in said
    assert "Run it? [y/N]" in said and status == 0, said
    assert (repo / "asked-and-ran").exists()
    assert git(repo, "log", "-1", "--format=%s") == "Ask\n"


def at_a_terminal(served, answer: str, *args: str) -> tuple[str, int]:
    """`acdc chat *args` with a terminal for stdin and stderr; `answer` is typed once the
    question shows. What the terminal showed, and the exit status."""
    _, _, repo, data = served
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "acdc", "chat", *args],
        stdin=follower,
        stderr=follower,
        stdout=subprocess.DEVNULL,
        env=terminal(repo, data),
    )
    os.close(follower)
    shown, answered = b"", False
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], 180)
            assert ready, f"the terminal showed nothing more: {shown!r}"
            try:
                piece = os.read(leader, 4096)
            except OSError:  # the process ended and closed the terminal
                break
            if not piece:
                break
            shown += piece
            if not answered and b"[y/N]" in shown:
                os.write(leader, answer.encode() + b"\n")
                answered = True
    finally:
        os.close(leader)
    return shown.decode(errors="replace"), process.wait(timeout=180)


def _reply_id(data: Path, session: str) -> str:
    with sqlite3.connect(data / "acdc.sqlite3") as database:
        row = database.execute(
            "SELECT id FROM history_message WHERE session_id = ? AND role = 'assistant' "
            "ORDER BY seq DESC LIMIT 1",
            (session,),
        ).fetchone()
    return row[0]


def accept_in_the_page(url: str, message_id: str) -> None:
    """The person's Accept all on the reply's card (a protected file waits for it)."""
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}),
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()),
    )
    opener.addheaders = [("Authorization", f"Bearer {TOKEN}")]  # the page's access token
    with opener.open(url + "history/", timeout=60) as response:
        token = re.search(r'"X-CSRFToken": "([^"]+)"', response.read().decode()).group(1)
    body = urllib.parse.urlencode({"op": "accept"}).encode()
    request = urllib.request.Request(
        f"{url}m/{message_id}/edits/", data=body, headers={"X-CSRFToken": token}
    )
    with opener.open(request, timeout=60) as response:
        assert response.status == 204
