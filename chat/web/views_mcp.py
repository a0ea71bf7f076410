"""Session tools → MCP servers: the person declares, removes and switches the MCP servers a
session's model may use, and answers a call of a tool that is not read-only.

The part lists each declared server with its state (not started, starting, running,
failed), its last error, whether this session uses it, and its tools as first listed with
what each costs in tokens; the repository's `.mcp.json` entries are offered with an Add
button and start nothing until added. Adding one starts it and lists its tools at once (the
person asked for it). Every POST answers with the part drawn again and the HUD's note that
the next request's tools differ (its cached prefix is rebuilt); bad input is a message in
the part, never a 500. Declarations are acdc's data (`chat.repo.mcp.servers`), as
`acdc mcp` keeps them.
"""

from __future__ import annotations

import shlex

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.apps import apps
from django.http import Http404, HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_POST

from chat.repo.commands.declaring import DeclarationError
from chat.repo.mcp import asking, servers, switches
from chat.repo.mcp.client import Connections, ServerFailure
from chat.repo.mcp.mcpjson import suggest
from chat.session import setup
from chat.web import approval_cards
from chat.web.broadcast import session_group
from chat.web.mcp_part import hud_note, part_context
from chat.web.params import MAX_ID, BadNumber, whole_number
from history import selectors
from history.models import Session

GONE = "This call is no longer waiting (its session was deleted): nothing ran."
UNKNOWN = "The answer is one of: Run once, Always allow this tool, Deny."
FIRST = "It was answered already (in another tab, or its turn ended): answered once, not again."


def _connections() -> Connections:
    return apps.get_app_config("chat").served.repository.mcp


@database_sync_to_async
def _session(session_id: str) -> Session:
    session = selectors.session_get(session_id=session_id)
    if session is None:
        raise Http404("no such session")
    return session


def _part(request: HttpRequest, session: Session, **extra) -> HttpResponse:
    """The part, and the HUD's note on the tools (out of band)."""
    served = apps.get_app_config("chat").served
    count = served.runtime.counter(setup.TOOL_ENCODING).count
    context = part_context(session.id, served.repository.mcp, count, **extra)
    html = render_to_string("chat/_mcp_servers.html", context, request=request)
    sent = bool(((session.context_state or {}).get("hud") or {}).get("requests"))
    return HttpResponse(html + hud_note(session.id, sent=sent, oob=True))


@require_GET
async def mcp_part(request: HttpRequest, session_id: str) -> HttpResponse:
    return _part(request, await _session(session_id))


@require_POST
async def mcp_add(request: HttpRequest, session_id: str) -> HttpResponse:
    """Declare a suggestion of `.mcp.json` (`suggested`) or one typed by hand (a command
    to run as words, or a URL), then start it and list its tools."""
    session = await _session(session_id)
    typed = {k: request.POST.get(k, "") for k in ("name", "command", "url", "timeout", "headers")}
    typed["network"] = request.POST.get("network") == "on"
    suggested = request.POST.get("suggested") == "1"
    try:
        added = _add_suggested(typed["name"]) if suggested else _add_typed(typed)
    except DeclarationError as exc:
        return _part(request, session, error=str(exc), typed={} if suggested else typed)
    try:
        listed = await _connections().get(added).tools()
    except ServerFailure as exc:
        return _part(request, session, error=f"Declared {added.name}, but {exc}")
    count = len(listed)
    note = f"Declared {added.name} and started it: {count} tool{'s' if count != 1 else ''}."
    return _part(request, session, note=note)


def _add_suggested(name: str) -> servers.Server:
    data, root = _connections().data_dir, _connections().root
    taken = frozenset(s.name for s in servers.declared(data))
    offer = next((s for s in suggest(root, taken) if s.name == name), None)
    if offer is None:
        raise DeclarationError(
            f"{name[:60]!r} is not suggested here any more (.mcp.json changed, or it was "
            "added already); declare it by hand below"
        )
    return servers.add(data, name, argv=offer.argv, url=offer.url)


def _add_typed(typed: dict) -> servers.Server:
    name, url = typed["name"].strip(), typed["url"].strip()
    try:
        argv = shlex.split(typed["command"])
    except ValueError as exc:
        raise DeclarationError(f"the command cannot be split into words ({exc})") from None
    raw = typed["timeout"].strip()
    try:
        high = servers.MAX_TIMEOUT_SECONDS
        seconds = whole_number(raw, what="The timeout", low=1, high=high) if raw else None
    except BadNumber as exc:
        raise DeclarationError(str(exc).rstrip(".") + " (seconds)") from None
    headers = [line.strip() for line in typed["headers"].splitlines() if line.strip()]
    return servers.add(
        _connections().data_dir,
        name,
        argv=argv,
        url=url,
        headers=headers,
        timeout_seconds=seconds,
        network=typed["network"],
    )


@require_POST
async def mcp_remove(request: HttpRequest, session_id: str) -> HttpResponse:
    session = await _session(session_id)
    name = request.POST.get("name", "")
    try:
        servers.remove(_connections().data_dir, name)
    except DeclarationError as exc:
        return _part(request, session, error=str(exc))
    await _connections().drop(name)
    return _part(request, session, note=f"Removed {name}; it is stopped.")


@require_POST
async def mcp_switch(request: HttpRequest, session_id: str) -> HttpResponse:
    """This session uses the server (`on`), or not; the other sessions are not changed."""
    session = await _session(session_id)
    name, on = request.POST.get("name", ""), request.POST.get("on") == "on"
    switches.switch(_connections().data_dir, session.id, name, on=on)
    note = f"{name} is {'on' if on else 'off'} for this session."
    return _part(request, session, note=note)


@require_POST
async def approval_answer(request: HttpRequest, approval_id: str) -> HttpResponse:
    """Run once, Always allow this tool, or Deny: stored once, and the waiting turn woken
    (it calls the tool, or tells the model it was denied)."""
    try:
        number = whole_number(approval_id, what="The approval", low=1, high=MAX_ID)
    except BadNumber as exc:
        return HttpResponse(str(exc), status=400)
    decision = request.POST.get("decision", "")
    if decision not in asking.DECISIONS:
        return HttpResponse(UNKNOWN, status=400)
    try:
        row = await database_sync_to_async(asking.claim)(number, decision)
    except asking.ApprovalGone:
        return HttpResponse(GONE, status=404)
    except asking.AlreadyAnswered as exc:
        return HttpResponse(approval_cards.render(approval_cards.of_row(exc.approval, FIRST)))
    _connections().approvals.answered(row.pk)
    fields = approval_cards.of_row(row)
    message = {"type": "chat.frame", "html": approval_cards.render(fields, oob=True)}
    await get_channel_layer().group_send(session_group(row.session_id), message)
    return HttpResponse(approval_cards.render(fields))
