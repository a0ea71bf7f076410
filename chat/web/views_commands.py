"""Session tools → Commands: the person declares, removes and picks the commands of the
served repository, and the session's "Check after applying edits".

The part lists the declared commands (`chat.repo.commands.declaring`, keyed by
the served repository's path as `acdc commands` keys them), what the repository's files suggest
(offered with an Add button, never added by themselves), a form to declare one by hand
(the command as words, split as a shell would, no shell run unless the person writes one),
the check switch, and, on a machine without bubblewrap, that every run waits for approval.
Every POST answers with the part drawn again; bad input is a message in it, never a 500.
The check is set through the edits' endpoint (`check_after_apply`), not a second setter.
"""

from __future__ import annotations

import posixpath
import shlex

from django.apps import apps
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from chat.repo import edittools
from chat.repo.commands import declaring, limits
from chat.repo.commands.declaring import DeclarationError, Declared
from chat.repo.commands.runner import CommandRuns
from chat.repo.commands.suggestions import Suggestion, suggest
from chat.turn import checking
from chat.web.edits.views import check_after_apply
from chat.web.params import BadNumber, whole_number
from history import selectors
from history.models import Session


def _session(session_id: str) -> Session:
    session = selectors.session_get(session_id=session_id)
    if session is None:
        raise Http404("no such session")
    return session


def _served_repository():
    """The repository the process serves (the served object's part)."""
    return apps.get_app_config("chat").served.repository


def _repository() -> str:
    """The served repository's path: its declared commands are keyed by it."""
    return _served_repository().path


def _runs() -> CommandRuns:
    return apps.get_app_config("chat").served.commands


def offered(declared: list[Declared]) -> list[Suggestion]:
    """The repository's suggestions not yet declared, each under a name free to take: a
    second `test` (pytest and a Makefile both suggest one) is named after its program."""
    taken = {command.name for command in declared}
    kept = []
    for suggestion in suggest(_served_repository().root, tuple(c.argv for c in declared)):
        name = suggestion.name
        if name in taken:
            program = posixpath.basename(suggestion.argv[0]) or "command"
            name = f"{program}-{suggestion.name}"[:40]
        while name in taken:
            name = f"{name[:37]}-{len(taken)}"
        taken.add(name)
        kept.append(Suggestion(name, suggestion.argv, suggestion.why))
    return kept


def commands_context(
    session: Session, runs: CommandRuns, *, error: str = "", note: str = "", typed=None
) -> dict:
    declared = declaring.declared(_repository())
    return {
        "session": session,
        "declared": declared,
        "suggestions": [
            {"name": s.name, "argv": s.argv, "why": s.why, "shown": declaring.shown(s.argv)}
            for s in offered(declared)
        ],
        "sandbox": runs.sandbox,
        "limits": limits.held_here(limits.Limits.configured()),  # and how each holds here
        "needs_approval": runs.needs_approval,
        "edits_on": edittools.enabled(),  # the check runs after edits apply: none when off
        # The session's check names a command removed since (from the terminal, say).
        "check_gone": bool(session.check_command)
        and session.check_command not in {c.name for c in declared},
        "commands_error": error,
        "commands_note": note,
        "typed": typed or {},  # the hand form's fields as sent, kept when refused
    }


def _part(request: HttpRequest, session: Session, **extra) -> HttpResponse:
    return render(request, "chat/_commands.html", commands_context(session, _runs(), **extra))


@require_GET
def commands_part(request: HttpRequest, session_id: str) -> HttpResponse:
    return _part(request, _session(session_id))


@require_POST
def command_add(request: HttpRequest, session_id: str) -> HttpResponse:
    """Declare a suggestion (`argv` words as offered) or one typed by hand (`command`)."""
    session = _session(session_id)
    name = request.POST.get("name", "").strip()
    suggested = request.POST.getlist("argv")
    typed = {key: request.POST.get(key, "") for key in ("name", "command", "timeout")}
    typed["network"] = request.POST.get("network") == "on"
    try:
        added = _add_suggested(name, tuple(suggested)) if suggested else _add_typed(name, request)
    except DeclarationError as exc:
        return _part(request, session, error=str(exc), typed={} if suggested else typed)
    words = len(added.argv)
    note = f"Declared {added.name}: {added.shown} ({words} word{'s' if words != 1 else ''})."
    return _part(request, session, note=note)


def _add_suggested(name: str, argv: tuple[str, ...]) -> Declared:
    """Only what the repository suggests now, as it was offered."""
    offers = offered(declaring.declared(_repository()))
    if not any(s.name == name and s.argv == argv for s in offers):
        raise DeclarationError(
            f"{declaring.shown(argv)[:80]!r} is not suggested here any more (its file "
            "changed, or it was declared already); declare it by hand below"
        )
    return declaring.add(_repository(), name, argv)


def _add_typed(name: str, request: HttpRequest) -> Declared:
    if not name:
        raise DeclarationError("give the command a name, for example: test")
    declaring.check_name(name)
    text = request.POST.get("command", "")
    try:
        argv = shlex.split(text)
    except ValueError as exc:  # an unclosed quote, a lone backslash at the end
        raise DeclarationError(
            f"the command cannot be split into words ({str(exc).lower()}): close every "
            "quote, or write the command as you would in a terminal"
        ) from None
    raw = request.POST.get("timeout", "").strip()
    try:
        seconds = (
            whole_number(raw, what="The timeout", low=1, high=declaring.max_timeout_seconds())
            if raw
            else None
        )
    except BadNumber as exc:
        raise DeclarationError(str(exc).rstrip(".") + " (seconds)") from None
    network = request.POST.get("network") == "on"
    return declaring.add(_repository(), name, argv, timeout_seconds=seconds, network=network)


@require_POST
def command_remove(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _session(session_id)
    name = request.POST.get("name", "")
    try:
        declaring.remove(_repository(), name)
    except DeclarationError as exc:
        return _part(request, session, error=str(exc))
    note = f"Removed {name}."
    if session.check_command == name:  # the session's check named it: off, not dangling
        checking.set_check(session, "")
        note = f"Removed {name}; the check after applying edits is off."
    return _part(request, session, note=note)


@require_POST
def command_check(request: HttpRequest, session_id: str) -> HttpResponse:
    """The session's "Check after applying edits", set by the edits' endpoint (`name`, or
    empty for off); the part drawn again says what it is now, or why not."""
    answer = check_after_apply(request, session_id)
    session = _session(session_id)
    if answer.status_code != 204:
        return _part(request, session, error=answer.content.decode())
    chosen = session.check_command
    note = f"After edits apply, {chosen} runs." if chosen else "No check after applying edits."
    return _part(request, session, note=note)
