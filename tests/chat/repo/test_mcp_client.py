"""MCP servers reached through the official SDK, for real: a small server written here with
the SDK (over stdio in bubblewrap, and over Streamable HTTP) and the reference
`mcp-server-time`. A sandboxed server cannot read a home-folder canary or reach a
127.0.0.1 listener; a hanging and a crashing tool fail alone, each within the timeout, and
the server answers the next call. 300 tools do not fit ACDC_MCP_TOOL_TOKENS: `tools` offers
only `search_tools` and `call_tool`, and one is found by words and called by its name.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from chat.llm.environment import configure_offline_environment
from chat.repo.commands.sandbox import Sandbox
from chat.repo.mcp.client import Connections, ServerFailure
from chat.repo.mcp.offer import find, listed, offered, search
from chat.repo.mcp.servers import Server
from contextcore.tokens import TokenCounter
from tests.chat.repo.commands_support import Listener

configure_offline_environment()

SERVER = '''
import os, socket, sys, time
from mcp.server import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("tiny")

@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Say the text back."""
    return "echo: " + text

@server.tool()
def read(path: str) -> str:
    """Read a file."""
    try:
        return "read: " + open(path).read()
    except OSError as exc:
        return f"cannot read: {exc.strerror}"

@server.tool()
def reach(port: int) -> str:
    """Connect to 127.0.0.1:port."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        return "reached"
    except OSError as exc:
        return f"unreachable: {exc.strerror}"

@server.tool()
def hang() -> str:
    """Never answers."""
    time.sleep(3600)
    return "late"

@server.tool()
def crash() -> str:
    """Ends the server."""
    os._exit(3)

def gauge(n):
    def read_gauge(unit: str) -> str:
        return f"gauge {n}: 42 {unit}"
    return read_gauge

for n in range(300):  # enough that their definitions cannot all sit in `tools`
    server.tool(
        name=f"gauge_{n:03d}",
        description=f"Read pressure gauge number {n} of boiler room {n % 7} in a unit.",
        annotations=ToolAnnotations(read_only_hint=True),
    )(gauge(n))

if sys.argv[1:2] == ["http"]:
    import uvicorn
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen(16)
    print(listening.getsockname()[1], flush=True)  # connections wait in its backlog
    config = uvicorn.Config(server.streamable_http_app(), log_level="error")
    uvicorn.Server(config).run(sockets=[listening])
else:
    server.run()
'''


@pytest.fixture
def sandbox() -> Sandbox:
    found = Sandbox.probe()
    assert found.available, f"bubblewrap is needed (make test installs it): {found.reason}"
    return found


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "tiny_server.py").write_text(SERVER)
    return root


def text_of(result) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_a_sandboxed_stdio_server_is_confined_and_its_failures_stay_one_call(
    tree, tmp_path, sandbox, monkeypatch
):
    home = tmp_path / "home"
    home.mkdir()
    (home / "canary").write_text("the person's secret")
    monkeypatch.setenv("HOME", str(home))
    listener = Listener()
    server = Server("tiny", argv=(sys.executable, "tiny_server.py"), timeout_seconds=4)
    connections = Connections(root=tree, data_dir=tmp_path / "data", sandbox=sandbox)
    connection = connections.get(server)
    try:
        tools = listed("tiny", await connection.tools())
        found = json.loads(search(tools, "boiler gauge 137"))
        called = find(tools, found[0]["name"])
        gauge = await connection.call(called.tool, {"unit": "bar"})
        echoed = await connection.call("echo", {"text": "hi"})
        canary = await connection.call("read", {"path": str(home / "canary")})
        own = await connection.call("read", {"path": str(tree / "tiny_server.py")})
        reached = await connection.call("reach", {"port": listener.port})
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(ServerFailure) as hung:
            await connection.call("hang", {})
        hung_seconds = loop.time() - started
        after_hang = await connection.call("echo", {"text": "still here"})
        with pytest.raises(ServerFailure) as crashed:
            await connection.call("crash", {})
        after_crash = await connection.call("echo", {"text": "again"})
        anyone_came = listener.connected()
    finally:
        await connections.close()
        listener.close()

    assert len(tools) == 305
    offered_here = offered(tools, 4000, TokenCounter("cl100k_base").count)
    assert [t["function"]["name"] for t in offered_here] == ["search_tools", "call_tool"]
    assert found[0]["name"] == "mcp__tiny__gauge_137"
    assert found[0]["parameters"]["required"] == ["unit"]
    assert text_of(gauge) == "gauge 137: 42 bar"
    small = tuple(t for t in tools if not t.tool.startswith("gauge_"))
    small_offer = offered(small, 4000, TokenCounter("cl100k_base").count)
    direct = [f"mcp__tiny__{n}" for n in ("crash", "echo", "hang", "reach", "read")]
    assert [t["function"]["name"] for t in small_offer] == ["search_tools", "call_tool", *direct]
    assert text_of(echoed) == "echo: hi"
    assert text_of(canary).startswith("cannot read")  # the home is an empty folder inside
    assert text_of(own).startswith("read: ")  # the work tree is visible
    assert text_of(reached).startswith("unreachable")
    assert not anyone_came
    assert str(hung.value) == "tiny: no answer calling hang within 4 s"
    assert hung_seconds < 4 * 2
    assert text_of(after_hang) == "echo: still here"
    assert "\n" not in str(crashed.value) and str(crashed.value).startswith("tiny: ")
    assert text_of(after_crash) == "echo: again"
    assert connection.state == "closed"


async def test_streamable_http_and_the_reference_time_server(tree, tmp_path, sandbox):
    process = subprocess.Popen(
        [sys.executable, "tiny_server.py", "http"], cwd=tree, stdout=subprocess.PIPE, text=True
    )
    connections = Connections(root=tree, data_dir=tmp_path / "data", sandbox=sandbox)
    port = int(await asyncio.to_thread(process.stdout.readline))  # once it listens
    http = Server("web", url=f"http://127.0.0.1:{port}/mcp", headers=(("X-Test", "1"),))
    time_server = Server("time", argv=(sys.executable, "-m", "mcp_server_time"))
    try:
        over_http = await connections.get(http).call("echo", {"text": "over http"})
        time_tools = {t.name for t in await connections.get(time_server).tools()}
        now = await connections.get(time_server).call("get_current_time", {"timezone": "UTC"})
    finally:
        await connections.close()
        process.terminate()
        process.communicate(timeout=60)

    assert text_of(over_http) == "echo: over http"
    assert {"get_current_time", "convert_time"} <= time_tools
    assert '"timezone": "UTC"' in text_of(now) or "UTC" in text_of(now)


async def test_network_is_given_only_to_a_server_declared_with_it_and_never_the_loopback(
    tree, tmp_path, sandbox
):
    """--network: the server's namespace gets slirp4netns's tap0, as a command declared
    with network does; the host's 127.0.0.1 stays out of reach. Without it, only lo."""
    listener = Listener()
    argv = (sys.executable, "tiny_server.py")
    connections = Connections(root=tree, data_dir=tmp_path / "data", sandbox=sandbox)
    try:
        networked = connections.get(Server("net", argv=argv, network=True, timeout_seconds=20))
        devices = text_of(await networked.call("read", {"path": "/proc/net/dev"}))
        reached = text_of(await networked.call("reach", {"port": listener.port}))
        plain = connections.get(Server("plain", argv=argv, timeout_seconds=20))
        plain_devices = text_of(await plain.call("read", {"path": "/proc/net/dev"}))
        anyone_came = listener.connected()
    finally:
        await connections.close()
        listener.close()

    assert "tap0:" in devices, devices
    assert "tap0:" not in plain_devices and "lo:" in plain_devices
    assert reached.startswith("unreachable") and not anyone_came
