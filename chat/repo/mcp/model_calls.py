"""The model's MCP calls: `search_tools`, `call_tool` and `mcp__<server>__<tool>` itself.

A session's MCP tools are a `Snapshot`: the enabled servers' tools as they were listed when
the session first offered them, kept in acdc's data folder by session id (`mcp-sessions/`),
so a server's later list (notifications/tools/list_changed, a restart of it) never changes
that session's `tools`; a server that fails to start lists nothing and its reason is kept.
`run_mcp_call` carries out one call: the name is looked up in the snapshot (an unknown name
runs nothing and says how to find one), the approval rule is applied (`offer.decide`), the
server is called through its `Connection` within its timeout, and the result is the text
`offer.result_text` makes; every call is recorded as a toolcall object, and any failure is
that call's one line, never the turn's.
A call that asks (a page's turn, a tool that is not read-only nor always allowed) waits
for the person's answer (`asking.ask`) and runs only on Run once or Always allow.
Non-goals: drawing the card the person answers (`chat.web.approval_cards`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from channels.db import database_sync_to_async
from django.conf import settings

from chat.repo.mcp import asking, offer, switches
from chat.repo.mcp.client import Connections, ServerFailure
from chat.repo.mcp.offer import Listed
from chat.repo.mcp.servers import Server
from chat.repo.tools.calls import ToolCall, ToolResult, display, record, stored_call_id
from history.models import Session

log = logging.getLogger(__name__)
FOLDER = "mcp-sessions"


@dataclass(frozen=True)
class Snapshot:
    tools: tuple[Listed, ...] = ()
    failures: tuple[str, ...] = ()  # a server that listed nothing: why
    servers: str = ""  # the declarations it was listed from (another set lists again)

    def definitions(self, count) -> list[dict]:
        budget = int(getattr(settings, "ACDC_MCP_TOOL_TOKENS", 4000))
        return offer.offered(self.tools, budget, count)


def handles(name: str) -> bool:
    return name in (offer.SEARCH, offer.CALL) or name.startswith(offer.PREFIX)


async def snapshot(
    data_dir: Path, session_id: str, servers: tuple[Server, ...], connections: Connections
) -> Snapshot:
    """The session's kept snapshot, or one listed now (and kept) from `servers`."""
    path = data_dir / FOLDER / f"{session_id}.json"
    key = servers_key(servers)
    kept = _read(path)
    if kept is not None and kept.servers == key:
        return kept
    tools: list[Listed] = []
    failures: list[str] = []
    for server in servers:
        try:
            tools += offer.listed(server.name, await connections.get(server).tools())
        except ServerFailure as exc:
            failures.append(str(exc))
    taken = Snapshot(tuple(sorted(tools, key=lambda t: t.name)), tuple(failures), key)
    if servers or kept is not None:
        _write(path, taken)
    return taken


def servers_key(servers: tuple[Server, ...]) -> str:
    return json.dumps([asdict(s) for s in servers])


def tools_change_pending(data_dir: Path, session_id: str, *, sent: bool) -> bool:
    """Whether the session's next request will carry other tools than its last one: the
    person added, removed or switched a server since (`sent`: the session sent a request
    already; one sent without a snapshot had no MCP tools)."""
    taken = _read(data_dir / FOLDER / f"{session_id}.json")
    before = taken.servers if taken is not None else (servers_key(()) if sent else None)
    return before is not None and before != servers_key(switches.enabled(data_dir, session_id))


def kept(data_dir: Path, session_id: str) -> Snapshot:
    """The session's snapshot as last taken (none: no MCP tools)."""
    return _read(data_dir / FOLDER / f"{session_id}.json") or Snapshot()


@dataclass(frozen=True)
class Reach:
    """What one turn's MCP calls may reach, and whether a page serves it (it can ask)."""

    taken: Snapshot
    servers: Mapping[str, Server]
    connections: Connections
    page: bool
    allowed: frozenset[str] = frozenset()  # --allow-mcp SERVER
    always: frozenset[str] = frozenset()  # tools the person always allows
    turn_id: str = ""
    waiting: asking.Waiting | None = None  # a page's turn: shows the approval card


async def run_mcp_call(session: Session, call: ToolCall, reach: Reach) -> ToolResult:
    result = ToolResult(stored_call_id(call.call_id), call.name, "ok", "")
    try:
        args = json.loads(call.arguments or "{}")
    except (ValueError, RecursionError):
        args = None
    if not isinstance(args, dict):
        result.status, result.output = "fail", "Error: the arguments must be a JSON object"
    else:
        result.args, result.args_display = args, display(call.name, args)
        await _carry_out(result, call.name, args, reach, session)
    await database_sync_to_async(record)(session, result, tool=call.name, args=result.args)
    return result


async def _carry_out(
    result: ToolResult, name: str, args: dict, reach: Reach, session: Session
) -> None:
    taken = reach.taken
    if name == offer.SEARCH:
        query = args.get("query")
        if not isinstance(query, str):
            result.status, result.output = "fail", "Error: give query as text"
            return
        result.output = offer.search(await _current(reach), query)
        return
    if name == offer.CALL:
        name, args = args.get("name"), args.get("arguments", {})
        if not isinstance(name, str) or not isinstance(args, dict):
            result.status = "fail"
            result.output = "Error: give name (mcp__<server>__<tool>) and arguments (an object)"
            return
    tool = offer.find(taken.tools, name) or offer.find(await _current(reach), name)
    server = reach.servers.get(tool.server) if tool is not None else None
    if tool is None or server is None:
        result.status = "fail"
        result.output = f"Error: no MCP tool {name[:80]!r}; search_tools lists what there is"
        return
    if not await _approved(result, tool, args, reach, session):
        return
    try:
        answer = await reach.connections.get(server).call(tool.tool, args)
    except ServerFailure as exc:
        result.status, result.output = "fail", f"Error: {exc}"
        return
    cap = int(getattr(settings, "ACDC_MCP_OUTPUT_BYTES", 8192))
    result.output, failed = offer.result_text(answer, cap)
    result.status = "fail" if failed else "ok"


async def _current(reach: Reach) -> tuple[Listed, ...]:
    """The snapshot's tools, then those its servers list now that it lacks (a server that
    sent notifications/tools/list_changed): found and called through search_tools and
    call_tool, never added to the session's `tools`."""
    found, names = list(reach.taken.tools), {t.name for t in reach.taken.tools}
    for server in reach.servers.values():
        try:
            live = offer.listed(server.name, await reach.connections.get(server).tools())
        except ServerFailure:
            continue
        found += [t for t in live if t.name not in names]
    return tuple(found)


async def _approved(
    result: ToolResult, tool: Listed, args: dict, reach: Reach, session: Session
) -> bool:
    """Whether the call may run: by the rule (`offer.decide`), else by the person's answer
    in the page; when not, `result` says why."""
    always = reach.always | await database_sync_to_async(asking.always_allowed)(session.id)
    verdict = offer.decide(tool, page=reach.page, allowed=reach.allowed, always=always)
    if verdict == "ask" and reach.waiting is None:  # nobody to ask: never run unasked
        verdict = f"{tool.name} was not run: it needs the developer's approval in the page"
    if verdict == "ask":
        call = (reach.turn_id, result.call_id, result.args_display)
        waits, waiting = reach.connections.approvals, reach.waiting
        answer = await asking.ask(session, tool, args, call=call, waits=waits, waiting=waiting)
        result.proposal = answer
        if answer["status"] in asking.RAN:
            return True
        verdict = asking.told(tool, answer["status"])
    if verdict != "run":
        result.status, result.output = "fail", verdict
        return False
    return True


def _read(path: Path) -> Snapshot | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        tools = tuple(Listed(**item) for item in data["tools"])
        return Snapshot(tools, tuple(data.get("failures", ())), str(data.get("servers", "")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("the MCP snapshot %s is unreadable (%s); listing again", path, exc)
        return None


def _write(path: Path, taken: Snapshot) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    data = {
        "tools": [asdict(t) for t in taken.tools],
        "failures": list(taken.failures),
        "servers": taken.servers,
    }
    partial.write_text(json.dumps(data), encoding="utf-8")
    partial.replace(path)


async def take(session_id: str, connections: Connections | None) -> Snapshot:
    """Before a turn opens its context: the session's snapshot from the declared servers
    (starting those it lists for the first time); nothing when none is declared."""
    if connections is None:
        return Snapshot()
    data_dir = connections.data_dir
    servers = switches.enabled(data_dir, session_id)
    if not servers and not (data_dir / FOLDER / f"{session_id}.json").exists():
        return Snapshot()
    return await snapshot(data_dir, session_id, servers, connections)


def reach(
    session_id: str,
    connections: Connections,
    *,
    page: bool,
    allowed=frozenset(),
    turn_id: str = "",
    waiting: asking.Waiting | None = None,
) -> Reach:
    """What the session's calls this turn may reach (its snapshot, the servers it uses);
    with `waiting`, a call that asks shows its card and waits for the person."""
    data_dir = connections.data_dir
    servers = {s.name: s for s in switches.enabled(data_dir, session_id)}
    taken = kept(data_dir, session_id)
    return Reach(
        taken, servers, connections, page, frozenset(allowed), turn_id=turn_id, waiting=waiting
    )
