"""`acdc chat --apply` through the real litellm path, against a loopback OpenAI-compatible
server (`bench.wirefakes.WireFake`) that streams Chat Completions chunks: once with
`edit_file` tool calls, once with SEARCH/REPLACE blocks in the reply's text. Each run is a
real `acdc` process; the files must change byte for byte (a CRLF file included), and the
next `acdc chat` of the same session must carry each result line once and the change as a
diff once, never the whole file again (a CRLF file included). Several large files are in
context, as in a real session, so that keeping the cached prefix is worth more than
rebuilding it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.wirefakes import Reply, ToolCall, WireFake

APP = "def f():\n    return 1\n\n" + "".join(
    f"def g{i}(x):\n    return x * {i} + {i * 7}\n\n" for i in range(200)
)
WIN_LINES = [f"row {i}\r\n".encode() for i in range(120)]
WIN = b"".join(WIN_LINES[:60]) + b"old line\r\n" + b"".join(WIN_LINES[60:])
OTHERS = {
    name: "".join(f"def {name}_{i}(y):\n    return y - {i}\n\n" for i in range(200))
    for name in ("b1", "b2", "b3")
}
BLOCKS = """Both changed.

app.py
```python
<<<<<<< SEARCH
def f():
    return 1
=======
def f():
    return 2
>>>>>>> REPLACE
```

win.txt
```
<<<<<<< SEARCH
old line
=======
new line
>>>>>>> REPLACE
```
"""


@pytest.fixture
def repo_files() -> dict[str, str | bytes]:
    return {"app.py": APP, "win.txt": WIN, **{f"{n}.py": t for n, t in OTHERS.items()}}


@pytest.fixture
def repo_is_git() -> bool:
    return True


def chat(fake: WireFake, root: Path, data: Path, *args: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ACDC_")}
    environ.pop("DJANGO_SETTINGS_MODULE", None)
    environ.update(
        ACDC_MODEL="openai/x",
        ACDC_API_BASE=fake.base_url + "/v1",
        OPENAI_API_KEY="sk-test",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        ACDC_EDITS="1",
        # The model is offered acdc's tools, whose definitions count against the window:
        # room for them beside these files, so the next request keeps its cached prefix.
        ACDC_CONTEXT_WINDOW="40000",
        ACDC_DATA_DIR=str(data),
        ACDC_REPO=str(root),
    )
    return subprocess.run(
        [sys.executable, "-m", "acdc", "chat", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=180,
    )


def sent_text(body: dict[str, Any]) -> str:
    """Every text the request's messages carry, joined (tool calls' arguments included)."""
    parts: list[str] = []
    for message in body["messages"]:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        for part in content if isinstance(content, list) else []:
            parts.append(part.get("text", ""))
        for call in message.get("tool_calls") or []:
            parts.append(call["function"]["arguments"])
    return "\n".join(parts)


def run_session(root: Path, tmp_path: Path, *replies: Reply) -> tuple[str, WireFake]:
    """`--apply` with the scripted replies, then a second chat in the same session; the
    text of the request that second chat sent."""
    with WireFake() as fake:
        fake.enqueue(*replies, Reply("second"))
        adds = [a for n in ("app.py", "win.txt", "b1.py", "b2.py", "b3.py") for a in ("--add", n)]
        first = chat(fake, root, tmp_path / "data", "--new", *adds, "--apply", "change both")
        assert first.returncode == 0, first.stderr
        session = re.search(r"session: (\S+)", first.stderr).group(1)
        second = chat(fake, root, tmp_path / "data", "--session", session, "next")
        assert second.returncode == 0, second.stderr
        assert second.stdout.strip() == "second"
        last = fake.requests[-1].body
    assert last["messages"][-1]["content"] == "next"
    return sent_text(last), fake


def assert_changed_once(root: Path, text: str) -> None:
    assert (root / "app.py").read_text() == APP.replace("return 1\n", "return 2\n", 1)
    assert (root / "win.txt").read_bytes() == WIN.replace(b"old line", b"new line")
    assert text.count("applied: app.py v1→v2, +1 −1") == 1
    assert text.count("applied: win.txt v1→v2, +1 −1") == 1
    assert text.count("app.py (version 2, diff against version 1)") == 1
    assert text.count("-    return 1\n+    return 2\n") == 1
    # The CRLF file's change is a diff too: its lines keep their carriage returns.
    assert text.count("win.txt (version 2, diff against version 1)") == 1
    assert text.count("-old line\r\n+new line\r\n") == 1
    assert text.count("def g199(x)") == 1  # the copy already cached, never the file again
    assert "def f():\n    return 2\n\ndef g0(x)" not in text
    assert text.count("row 119\r\n") == 1  # the cached copy only, never the file again


def test_edit_file_calls_apply_and_the_next_request_carries_each_change_once(root, tmp_path):
    calls = (
        ToolCall(
            "edit_file", {"path": "app.py", "old_text": "    return 1", "new_text": "    return 2"}
        ),
        ToolCall(
            "edit_file", {"path": "win.txt", "old_text": "old line\n", "new_text": "new line\n"}
        ),
    )
    text, _ = run_session(root, tmp_path, Reply("", calls), Reply("done"))
    assert_changed_once(root, text)


def test_search_replace_blocks_apply_and_the_next_request_carries_each_change_once(root, tmp_path):
    text, fake = run_session(root, tmp_path, Reply(BLOCKS))
    assert_changed_once(root, text)
    assert len(fake.requests) == 2  # no retry round: every block applied
