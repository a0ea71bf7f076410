"""The review of a reply's edits: Accept, Reject, Undo and Apply again, per hunk, file or
turn; Auto-apply, and "Check after applying edits" (the name of a declared command).

Each POST does the work through `chat.repo.edits` (claimed once, so two tabs pressing at
once apply once; Accept all takes the reply whole or not at all), then draws the reply's
edits section again and sends it to every tab of the session through its channel group,
the pressing tab included (the answer is empty), with the commit form of Session tools
when what there is to commit may have changed.
One hunk of a file is chosen this way: Accept hunk n writes that hunk and keeps the rest
of the file's change pending, as one whole-file edit against the file as written; Reject
hunk n keeps the other hunks pending the same way.
Edits are off (404) unless `ACDC_EDITS`.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from django.apps import apps
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_POST

from chat.repo import edittools
from chat.repo.edits import applying, disk, undo
from chat.repo.git import shown
from chat.turn import checking, faults
from chat.web.broadcast import check_due, to_repository, to_session
from chat.web.edits.cards import badges_message, render_edits
from chat.web.edits.commit_view import commit_frame
from chat.web.params import BadNumber, bad_request, whole_number
from contextcore.edits import EditOp, apply_hunks, diff_hunks, text_sha256
from history import edits as rows_
from history.models import Message, PendingEdit, Session

Status = PendingEdit.Status
log = logging.getLogger(__name__)


OPS = ("accept", "reject", "undo", "reapply")


def _enabled() -> None:
    if not edittools.enabled():
        raise Http404("edits are off (ACDC_EDITS)")


@require_POST
def edits_act(request: HttpRequest, message_id: str) -> HttpResponse:
    """op=accept|reject|undo, for the whole reply, one `path`, or one `hunk` (1-based) of it."""
    _enabled()
    message = Message.objects.select_related("session").filter(pk=message_id).first()
    if message is None or message.role != Message.Role.ASSISTANT:
        raise Http404("no such reply")
    op, path = request.POST.get("op", ""), request.POST.get("path") or None
    raw = request.POST.get("hunk", "")
    if op not in OPS or (raw and not path):
        return HttpResponseBadRequest(
            "op is accept, reject, undo or reapply; a hunk needs its path"
        )
    try:
        hunk = whole_number(raw, what="The hunk", low=1, high=100_000) if raw else None
    except BadNumber as exc:
        return bad_request(exc)
    repo = apps.get_app_config("chat").served.repository.indexed()
    alert = False
    if op in ("undo", "reapply"):
        act = undo.undo if op == "undo" else applying.reapply
        outcome = act(message.session, message, repo=repo, path=path)
        note, alert = _said(outcome), bool(outcome.notice)
    elif hunk is not None:
        note = _one_hunk(message, path or "", hunk - 1, accepted=op == "accept", repo=repo)
    else:
        note, alert = _decide(message, path, accepted=op == "accept", repo=repo)
    html = render_edits(message, repo, oob=True, note=note, alert=alert)
    if op != "reject":  # what there is to commit changed: the form appears, or goes
        html += commit_frame(message.session, repo)
    to_session(message.session_id, html, act=request.act)
    if op != "reject":
        _badges({row.path for row in message.edits.all()}, repo.root, request.act)
    # Nothing in the answer: the pressed button is gone once the frame above swapped its
    # section, and htmx looks for an answer's out-of-band targets from the button.
    return HttpResponse(status=204)


def _badges(paths: set[str], root: Path, act: str) -> None:
    """The Files panel's git badges of the files acdc wrote, in every tab of the repository."""
    to_repository(root, badges_message(paths, root), act=act)


def _pending(message: Message, path: str | None) -> list[PendingEdit]:
    rows = message.edits.filter(status=Status.PENDING).order_by("id")
    return list(rows.filter(path=path) if path is not None else rows)


def _decide(message: Message, path: str | None, *, accepted: bool, repo) -> tuple[str, bool]:
    """The note under the cards, and whether it is an alert (nothing written)."""
    ids = [row.pk for row in _pending(message, path)]
    if not ids:
        return "Nothing is pending there any more.", False
    if not accepted:
        return "\n".join(row.result for row in applying.reject(ids)), False
    if path is None:  # Accept all: the reply's edits together or not at all
        try:
            outcome = applying.accept_reply(message.session, message, repo=repo)
        except Exception as exc:  # a full disk, the database gone: one line, nothing written
            fault = faults.fault_of(exc)
            if fault is None:
                raise
            log.warning("Accept all of reply %s: %s", message.id, fault.line("try again"))
            return f"Nothing was written: {fault.line('try again')}", True
        if outcome.applied and checking.request_after_accept(message):
            check_due(message.session_id)  # the session's check (chat.turn.checking)
    else:
        outcome = applying.accept(message.session, ids, repo=repo)
    return _said(outcome), bool(outcome.notice)


def _said(outcome: applying.SetOutcome) -> str:
    """The note under the cards: what was written, or why nothing was."""
    if outcome.notice:
        return outcome.notice
    if outcome.taken:
        return "Another tab took these edits first."
    return "\n".join(outcome.lines)


def _one_hunk(message: Message, path: str, number: int, *, accepted: bool, repo) -> str:
    """Accept or reject hunk `number` (0-based) of the file's pending change; the other
    hunks stay pending as one edit of the whole file."""
    rows = _pending(message, path)
    changes = applying.preview(message.session, rows, repo=repo) if rows else []
    if not changes:
        return "That change is no longer pending as shown; the card is drawn again."
    key, before, after = changes[0]
    total = len(diff_hunks(before, after))
    if before is None or after is None or not 0 <= number < total:
        return "That hunk is not there any more; the card is drawn again."
    ids = [row.pk for row in rows]
    if accepted:
        outcome = applying.accept(message.session, ids, repo=repo, hunks={number})
        if not outcome.applied:
            return _said(outcome)
        written, rest, note = disk.target(repo, key).text or "", after, _said(outcome)
    else:
        note = f"rejected: hunk {number + 1} of {shown(key)}"
        rejected = applying.reject(ids)
        if not rejected:
            return "Another tab took this edit first."
        PendingEdit.objects.filter(pk__in=[row.pk for row in rejected]).update(result=note)
        rows_.message_record_edits(message)
        others = set(range(total)) - {number}
        written, rest = before, apply_hunks(before, after, others)
    if rest != written:
        _keep_pending(message, key, written, rest)
    return note


def _keep_pending(message: Message, key: str, now: str, wanted: str) -> None:
    """The part of a file's change not yet decided, pending as one whole-file edit."""
    # The whole file as written is the old text and its version the base: should the file
    # change before the rest is accepted, a change in other lines merges, one in the same
    # lines is the conflict the card shows.
    op = EditOp(path=key, kind="replace", old_text=now, new_text=wanted)
    op = replace(op, base_sha256=text_sha256(now), source="write_file")
    [row] = rows_.edits_create(
        session=message.session, ops=[op], turn_id=message.turn_id, message=message
    )
    left = diff_hunks(now, wanted)
    plus, minus = sum(h.added for h in left), sum(h.removed for h in left)
    row.result = f"pending review: {shown(key)}, +{plus} −{minus} (the hunks not yet decided)"
    row.save(update_fields=["result"])
    rows_.message_record_edits(message)


@require_POST
def auto_apply(request: HttpRequest, session_id: str) -> HttpResponse:
    """The session's Auto-apply switch; every tab's switch follows."""
    _enabled()
    session = Session.objects.filter(pk=session_id).first()
    if session is None:
        raise Http404("no such session")
    session.auto_apply = request.POST.get("enabled") == "on"
    session.save(update_fields=["auto_apply"])
    oob = render(request, "chat/_auto_apply.html", {"session": session, "oob": True})
    to_session(session.id, oob.content.decode(), act=request.act)
    return HttpResponse(status=204)  # the frame above redraws the switch, here too


@require_POST
def check_after_apply(request: HttpRequest, session_id: str) -> HttpResponse:
    """The session's "Check after applying edits": `name` a declared command, or empty for
    off (`chat.turn.checking`). 204, or 400 saying which names are declared."""
    _enabled()
    session = Session.objects.filter(pk=session_id).first()
    if session is None:
        raise Http404("no such session")
    try:
        checking.set_check(session, request.POST.get("name", ""))
    except checking.CheckRefused as exc:
        return HttpResponseBadRequest(str(exc))
    return HttpResponse(status=204)
