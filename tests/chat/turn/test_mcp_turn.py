"""MCP servers through a whole turn: `acdc/fake` (through litellm) scripted to call the
reference servers from PyPI, run over stdio in real bubblewrap.

mcp-server-time's answer reaches the next request, its definitions follow acdc's own tools
with `search_tools` and `call_tool`, and the `tools` array is the same bytes in the next
turn even after its server was stopped and started again; from the terminal,
mcp-server-git's read-only `git_status` runs and its `git_commit` (not read-only) does not,
the model told that it needs the developer's approval.
"""

from __future__ import annotations

import json
import sys

import pytest

from acdc.cli import parse_args
from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.repo.mcp import servers
from chat.turn.events import ToolCallFinished
from chat.turn.turns import TurnInput, TurnServices, run_turn
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)


def call(name: str, arguments: dict, call_id: str) -> dict:
    return {"id": call_id, "name": name, "arguments": arguments}


async def turn(session, text: str, **options) -> list:
    events: list = []

    async def emit(event) -> None:
        events.append(event)

    sent = TurnInput(session.id, text, **{"model": "acdc/fake", **options})
    await run_turn(sent, TurnServices(emit=emit, wiring=served()))
    return events


def tool_answers(request) -> list[str]:
    return [m["content"] for m in request.messages if m.get("role") == "tool"]


@pytest.fixture
def repo_is_git() -> bool:
    return True


@pytest.fixture
def mcp():
    """The served object's MCP connections, with no server declared before or after."""
    connections = served().repository.mcp
    (connections.data_dir / servers.FILE_NAME).unlink(missing_ok=True)
    yield connections
    (connections.data_dir / servers.FILE_NAME).unlink(missing_ok=True)


async def test_a_time_servers_answer_reaches_the_next_request_and_tools_stay(
    fake, served_root, mcp
):
    servers.add(mcp.data_dir, "time", argv=[sys.executable, "-m", "mcp_server_time"])
    session = await new_session()
    fake.enqueue(
        FakeStep(tool_calls=[call("mcp__time__get_current_time", {"timezone": "UTC"}, "c1")]),
        FakeStep(text="It is some time in UTC."),
        FakeStep(tool_calls=[call("call_tool", {"name": "nope", "arguments": {}}, "c2")]),
        FakeStep(text="No such tool."),
    )
    try:
        events = await turn(session, "What time is it?")
        await mcp.close()  # the server stops; the next turn starts it again
        await turn(session, "And a tool that is not there?")
        dry = await turn(session, "What would you send?", model="acdc/dry-run")
    finally:
        await mcp.close()

    names = [t["function"]["name"] for t in fake.requests[0].tools]
    mcp_part = names[names.index("search_tools") :]
    assert mcp_part == [
        "search_tools", "call_tool", "mcp__time__convert_time", "mcp__time__get_current_time"
    ]  # fmt: skip
    assert "run_command" in names[: names.index("search_tools")]  # acdc's own come first
    [answer] = tool_answers(fake.requests[1])
    assert '"timezone": "UTC"' in answer
    [card] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (card.tool, card.status) == ("mcp__time__get_current_time", "ok")
    first = json.dumps(fake.requests[0].tools)
    assert all(json.dumps(r.tools) == first for r in fake.requests)
    [report] = [e.text for e in dry if type(e).__name__ == "TurnFinished"]
    assert "- MCP tools in `tools`: `search_tools` (" in report
    assert "`mcp__time__get_current_time` (" in report
    assert tool_answers(fake.requests[-1])[-1] == (
        "Error: no MCP tool 'nope'; search_tools lists what there is"
    )


async def test_from_the_terminal_a_tool_that_is_not_read_only_does_not_run(fake, served_root, mcp):
    argv = [sys.executable, "-m", "mcp_server_git", "--repository", str(served_root)]
    servers.add(mcp.data_dir, "git", argv=argv)
    session = await new_session()
    fake.enqueue(
        FakeStep(
            tool_calls=[
                call("mcp__git__git_status", {"repo_path": str(served_root)}, "c1"),
                call(
                    "mcp__git__git_commit",
                    {"repo_path": str(served_root), "message": "by the model"},
                    "c2",
                ),
            ]
        ),
        FakeStep(text="Status read; the commit waits for you."),
    )
    try:
        await turn(session, "Commit it all.")
    finally:
        await mcp.close()

    status, commit = tool_answers(fake.requests[1])
    assert status.startswith("Repository status:")
    assert commit == (
        "mcp__git__git_commit was not run: it is not read-only, so it needs the "
        "developer's approval (in the page, or acdc chat --allow-mcp git)"
    )


async def test_allow_mcp_lets_the_servers_other_tools_run(fake, served_root, mcp):
    """`acdc chat --allow-mcp git`: its parsing, and the turn it asks for runs git_add."""
    args = parse_args(["chat", "add it", "--allow-mcp", "git"])
    (served_root / "new.txt").write_text("new\n")
    argv = [sys.executable, "-m", "mcp_server_git", "--repository", str(served_root)]
    servers.add(mcp.data_dir, "git", argv=argv)
    session = await new_session()
    adding = {"repo_path": str(served_root), "files": ["new.txt"]}
    fake.enqueue(
        FakeStep(
            tool_calls=[call("call_tool", {"name": "mcp__git__git_add", "arguments": adding}, "c1")]
        ),
        FakeStep(text="Added."),
    )
    try:
        await turn(session, "Add new.txt.", allow_mcp=frozenset(args.allow_mcp))
    finally:
        await mcp.close()

    [added] = tool_answers(fake.requests[1])
    # It reached the server, which ran git: git's own folder is read-only in the sandbox.
    assert added.startswith("Error executing tool git_add: Cmd('git') failed"), added
