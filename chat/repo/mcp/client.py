"""The connection to one declared MCP server: started on first use, one task owning it.

`Connection.tools()` starts the server when nothing has yet (a stdio server in the commands'
sandbox, `confined`; a Streamable HTTP one by its URL and headers), lists its tools once and
keeps that list; `call(tool, arguments)` calls one, bounded by the server's timeout. The
connection's transport and SDK session are entered and left by one asyncio task (`_own`),
which waits for `close()`; a server that fails to start, crashes, hangs past its timeout or
answers garbage makes that call raise `ServerFailure` with a one-line reason, and the
connection's `state` and `last_error` say what happened (a crashed server is started again
on the next use). `Connections` holds one per declared server and closes them all with the
process that served them.
Non-goals: what the model sees (the tools' definitions and results), approvals.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chat.repo.commands.confine import netns
from chat.repo.commands.sandbox import Sandbox, bwrap_argv, confinement, environment
from chat.repo.commands.waits import ProposalWaits
from chat.repo.mcp import netlaunch
from chat.repo.mcp.netlaunch import write_order
from chat.repo.mcp.servers import Server

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters
    from mcp_types import CallToolResult, Tool

log = logging.getLogger(__name__)
START_SECONDS = 30.0
MAX_TOOLS = 1000  # a server listing more is cut here (and says so in last_error)


class ServerFailure(Exception):
    """One call or start that failed; the text is one line for the model and the page."""


def one_line(exc: BaseException) -> str:
    """An exception as one short line (an exception group: its first leaf)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


class Connection:
    """One server's connection, owned by one task; `state` is stopped, starting, ready,
    failed or closed."""

    def __init__(self, server: Server, *, root: Path, data_dir: Path, sandbox: Sandbox) -> None:
        self.server = server
        self.root = root
        self.data_dir = data_dir
        self.sandbox = sandbox
        self.state = "stopped"
        self.last_error = ""
        self._session: ClientSession | None = None
        self._owner: asyncio.Task | None = None
        self._ready: asyncio.Future | None = None
        self._stop: asyncio.Event | None = None
        self._tools: tuple[Tool, ...] | None = None
        self._starting = asyncio.Lock()

    async def tools(self) -> tuple[Tool, ...]:
        """The server's tools as listed first, or again after it said they changed."""
        if self._tools is None:
            session = await self._started()
            listed = await self._bounded(session.list_tools(), "listing its tools")
            tools = tuple(listed.tools)
            if len(tools) > MAX_TOOLS:
                self.last_error = f"it lists {len(tools)} tools; the first {MAX_TOOLS} are used"
            self._tools = tools[:MAX_TOOLS]
        return self._tools

    @property
    def listed(self) -> tuple[Tool, ...] | None:
        """The tools as first listed, or None before they were."""
        return self._tools

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> CallToolResult:
        session = await self._started()
        return await self._bounded(session.call_tool(tool, dict(arguments)), f"calling {tool}")

    async def close(self) -> None:
        owner, self._owner = self._owner, None
        if owner is not None:
            assert self._stop is not None
            self._stop.set()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(owner, START_SECONDS)
            if not owner.done():
                owner.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await owner
        self._session = None
        self.state = "closed"

    def log_path(self) -> Path:
        """Where a stdio server's stderr goes (each start writes it afresh)."""
        folder = self.data_dir / "mcp-logs"
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        return folder / f"{self.server.name}.log"

    def last_log_line(self) -> str:
        try:
            lines = self.log_path().read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " ".join(lines[-1].split())[:200] if lines else ""

    async def _bounded(self, work: Any, doing: str) -> Any:
        seconds = self.server.timeout_seconds
        try:
            return await asyncio.wait_for(work, seconds)
        except TimeoutError:
            self.last_error = f"{self.server.name}: no answer {doing} within {seconds} s"
            raise ServerFailure(self.last_error) from None
        except ServerFailure:
            raise
        except Exception as exc:  # the SDK's errors, a closed stream, garbage on the wire
            self.last_error = f"{self.server.name}: {doing} failed: {one_line(exc)}"
            if "closed" in one_line(exc).casefold():  # it ended: the next use starts it again
                self._session, self.state = None, "failed"
            raise ServerFailure(self.last_error) from None

    async def _started(self) -> ClientSession:
        async with self._starting:
            if self._session is not None and self._owner is not None and not self._owner.done():
                return self._session
            if self._owner is not None:  # it ended or crashed: start it again
                await self.close()
            self.state = "starting"
            loop = asyncio.get_running_loop()
            self._ready, self._stop = loop.create_future(), asyncio.Event()
            self._owner = asyncio.create_task(self._own(), name=f"mcp:{self.server.name}")
            try:
                self._session = await asyncio.wait_for(asyncio.shield(self._ready), START_SECONDS)
            except TimeoutError:
                await self.close()
                self.state = "failed"
                self.last_error = f"{self.server.name}: did not start within {START_SECONDS:g} s"
                raise ServerFailure(self.last_error) from None
            except ServerFailure as exc:
                self.state, self.last_error = "failed", str(exc)
                raise
            self.state = "ready"
            return self._session

    async def _own(self) -> None:
        """Enter the transport and the session, hand the session over, wait to stop."""
        from chat.repo.mcp import mcp_sdk as sdk  # the SDK's import waits for a server

        assert self._ready is not None and self._stop is not None
        try:
            transport = self._transport(sdk)
            heard = self._heard
            async with (
                transport as (read, write),
                sdk.ClientSession(read, write, message_handler=heard) as session,
            ):
                await session.initialize()
                if not self._ready.done():
                    self._ready.set_result(session)
                await self._stop.wait()
        except Exception as exc:
            named = isinstance(exc, ServerFailure)  # it names the server already
            reason = one_line(exc) if named else f"{self.server.name}: {one_line(exc)}"
            log.info("MCP server %s ended: %s", self.server.name, reason)
            if not self._ready.done():
                said = self.last_log_line() if not self.server.url else ""
                reason += f" (when starting; it said: {said})" if said else " (when starting)"
                self._ready.set_exception(ServerFailure(reason))
            elif not self._stop.is_set():
                self.state, self.last_error = "failed", reason
        finally:
            if not self._ready.done():
                self._ready.set_exception(ServerFailure(f"{self.server.name}: it ended at once"))

    async def _heard(self, message: Any) -> None:
        """A server that says its tools changed is listed again at the next `tools()`
        (a session's snapshot keeps the list it was offered; `search_tools` finds the new)."""
        if getattr(message, "method", "") == "notifications/tools/list_changed":
            self._tools = None

    @asynccontextmanager
    async def _transport(self, sdk: Any) -> AsyncIterator[Any]:
        if self.server.url:
            headers, seconds = dict(self.server.headers), self.server.timeout_seconds
            async with (
                sdk.httpx2.AsyncClient(headers=headers, timeout=seconds) as http,
                sdk.streamable_http_client(self.server.url, http_client=http) as streams,
            ):
                yield streams
            return
        with tempfile.TemporaryDirectory(prefix="acdc-mcp-") as scratch:
            params = self._confined(sdk, Path(scratch))
            with open(self.log_path(), "w", encoding="utf-8", errors="replace") as errlog:
                async with sdk.stdio_client(params, errlog=errlog) as streams:
                    yield streams

    def _confined(self, sdk: Any, scratch: Path) -> StdioServerParameters:
        """The stdio server's command: its argv inside bubblewrap, as a command runs; one
        declared with network through `netlaunch`, as a command declared with network."""
        if not self.sandbox.available:
            raise ServerFailure(
                f"{self.server.name}: no sandbox on this machine ({self.sandbox.reason}); "
                "stdio MCP servers run only inside it"
            )
        if self.server.network and (reason := netns.missing()):
            raise ServerFailure(f"{self.server.name}: {reason.replace('command', 'server', 1)}")
        env = environment()
        box = confinement(self.root, self.data_dir, argv=self.server.argv, environ=env)
        empty = scratch / "empty"
        empty.touch(mode=0o444)
        if self.server.network:  # bubblewrap and slirp4netns, started by the launcher
            order = (self.sandbox, box, self.server.argv, empty)
            command = [sys.executable, netlaunch.__file__, str(write_order(scratch, order))]
        else:
            command = bwrap_argv(self.sandbox, box, self.server.argv, empty_file=empty)
        program, args = command[0], command[1:]
        return sdk.StdioServerParameters(command=program, args=args, env=env, cwd=self.root)


class Connections:
    """The declared servers' connections for one served repository, made on first use."""

    def __init__(
        self, *, root: Path | Callable[[], Path], data_dir: Path, sandbox: Sandbox | None = None
    ) -> None:
        self._where = root if callable(root) else (lambda: root)
        self.data_dir = data_dir
        self._sandbox = sandbox
        self._open: dict[str, Connection] = {}
        # The calls of tools that are not read-only, waiting for the person's answer.
        self.approvals = ProposalWaits()

    @property
    def root(self) -> Path:
        return Path(self._where())

    def get(self, server: Server) -> Connection:
        held = self._open.get(server.name)
        if held is None or held.server != server:
            if self._sandbox is None:
                self._sandbox = Sandbox.probe()
            held = Connection(server, root=self.root, data_dir=self.data_dir, sandbox=self._sandbox)
            self._open[server.name] = held
        return held

    def peek(self, name: str) -> Connection | None:
        """The server's connection if one was made (nothing is made or started)."""
        return self._open.get(name)

    async def drop(self, name: str) -> None:
        """A removed server: its connection closed and forgotten."""
        held = self._open.pop(name, None)
        if held is not None:
            await held.close()

    async def close(self) -> None:
        held, self._open = list(self._open.values()), {}
        await asyncio.gather(*(c.close() for c in held))
