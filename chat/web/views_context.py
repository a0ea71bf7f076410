"""HTTP actions on a session's context: checkpoints, rollback, undo compaction, pins (the
optional Commit of acdc's files is `chat.web.edits.commit_view`).

Small htmx endpoints (POST, CSRF-protected) that answer with the fragment to swap in, or
with `HX-Refresh` when the conversation itself changed (a rollback or an undo re-renders
the message list). Every refusal is a message in the fragment, never a server error.
Long work (compaction itself) goes through the websocket, not through here.
"""

from __future__ import annotations

from django.apps import apps
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from chat.repo import boundary, edittools, mentions, outlines, picker, sessionsets
from chat.session import Wiring, checkpoints, endless, setchanges, suggesting
from chat.session.compaction import CompactionRefused, undo_compaction
from chat.session.version import tools_token
from chat.turn.preparation.prepare import grounding_enabled
from chat.web import params
from chat.web.broadcast import announce
from chat.web.panels import tree
from history import selectors
from history.models import Message, Session


def _served():
    """The process's served object (chat.live.served), as the chat app built it."""
    return apps.get_app_config("chat").served


def _session(session_id: str) -> Session:
    session = selectors.session_get(session_id=session_id)
    if session is None:
        raise Http404("no such session")
    return session


def tools_context(session: Session, error: str = "", note: str = "") -> dict:
    live = session.compactions.filter(undone_at=None).order_by("-created_at", "-id").first()
    return {
        "session": session,
        "grounding": grounding_enabled(session),
        "checkpoints": checkpoints.listing(session)[:20],
        "edits_on": edittools.enabled(),  # rollback then offers files too
        "last_compaction": live,
        "tools_error": error,
        "tools_note": note,
        # The other tabs refetch when it moves.
        "tools_version": tools_token(session.id, _served().repository.root),
    }


def _tools(request: HttpRequest, session: Session, **extra: str) -> HttpResponse:
    return render(request, "chat/_session_tools.html", tools_context(session, **extra))


def _refresh() -> HttpResponse:
    response = HttpResponse(status=204)
    response["HX-Refresh"] = "true"
    return response


def _follow(session_id: str, wiring: Wiring) -> None:
    """After the history changed under it: the saved HUD is figured again (a reload shows
    it too), and every tab of the session follows."""
    setchanges.refresh_sets(session_id, wiring)
    announce(session_id)


@require_GET
def session_tools(request: HttpRequest, session_id: str) -> HttpResponse:
    return _tools(request, _session(session_id))


@require_POST
def checkpoint_create(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _session(session_id)
    label = request.POST.get("label", "")
    checkpoint = checkpoints.take(session, label=label)
    note = f"Checkpoint “{checkpoint.label or 'unnamed'}” saved."
    response = _tools(request, session, note=note)
    announce(session.id)
    return response


@require_POST
def checkpoint_rollback(request: HttpRequest, session_id: str, checkpoint_id: str) -> HttpResponse:
    session = _session(session_id)
    try:
        number = params.whole_number(checkpoint_id, what="The checkpoint", high=params.MAX_ID)
    except params.BadNumber as exc:
        return params.bad_request(exc)
    try:
        scope = request.POST.get("scope", "conversation")
        checkpoints.rollback(session.id, number, scope, repo=_served().repository.indexed())
    except checkpoints.RollbackRefused as exc:
        return _tools(request, session, error=str(exc))
    _follow(session.id, apps.get_app_config("chat").served)
    return _refresh()


@require_POST
def compaction_undo(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _session(session_id)
    served = apps.get_app_config("chat").served
    try:
        undo_compaction(session.id, served)
    except CompactionRefused as exc:
        return _tools(request, session, error=str(exc))
    _follow(session.id, served)
    return _refresh()


@require_POST
def grounding_toggle(request: HttpRequest, session_id: str) -> HttpResponse:
    """Offer earlier summaries and pinned notes as related context (per session)."""
    session = _session(session_id)
    enabled = request.POST.get("grounding") == "on"
    Session.objects.filter(pk=session.pk).update(grounding=enabled)
    session.refresh_from_db()
    announce(session.id)
    note = "Related context is on." if enabled else "Related context is off."
    return _tools(request, session, note=note)


@require_POST
def instructions_toggle(request: HttpRequest, session_id: str) -> HttpResponse:
    """Send the project instructions in this session's requests, or not: kept on the
    session row, and other tabs are told; answers with the Context panel (the switch keeps
    its id, so htmx gives it the focus back)."""
    session = _session(session_id)
    enabled = request.POST.get("instructions") == "on"
    Session.objects.filter(pk=session.pk).update(instructions=enabled)
    hud = setchanges.refresh_sets(session.id, apps.get_app_config("chat").served)
    announce(session.id)  # the session's other tabs draw the new Context panel
    return render(request, "chat/_hud.html", {"hud": hud})


@require_POST
def suggestions_choose(request: HttpRequest, session_id: str) -> HttpResponse:
    """The Context panel's "Suggested for this message": the switch (`on` sent with the
    switch's form), or a region's key with `remove` or `pin` (`unpin`). Kept on the session
    row; answers with the Context panel, and other tabs are told."""
    session = _session(session_id)
    key, action = request.POST.get("key", ""), request.POST.get("action", "")
    if action == "switch":
        suggesting.choose(session.id, off=request.POST.get("suggestions") != "on")
    elif key and action in ("remove", "pin", "unpin"):
        suggesting.choose(
            session.id,
            remove=key if action == "remove" else "",
            pin={"pin": key, "unpin": "-" + key}.get(action, ""),
        )
    else:
        return HttpResponseBadRequest("Say what to do with which suggestion.")
    hud = setchanges.refresh_sets(session.id, apps.get_app_config("chat").served)
    announce(session.id)
    return render(request, "chat/_hud.html", {"hud": hud})


def endless_context(session: Session, error: str = "") -> dict:
    return {
        "session": session,
        "endless": endless.endless_state(session),
        "templates": endless.templates(_served().repository.root),
        "endless_error": error,
    }


@require_http_methods(["GET", "POST"])
def endless_choose(request: HttpRequest, session_id: str) -> HttpResponse:
    """The header's Endless switch and template chooser (GET: the form as it is)."""
    session = _session(session_id)
    if request.method == "GET":
        return render(request, "chat/_endless.html", endless_context(session))
    error = endless.set_endless(
        session.id,
        enabled=request.POST.get("enabled") == "on",
        template=request.POST.get("template", ""),
        root=_served().repository.root,
    )
    session.refresh_from_db()
    return render(request, "chat/_endless.html", endless_context(session, error))


@require_GET
def files_json(request: HttpRequest, session_id: str) -> JsonResponse:
    """What the Files panel's script keeps (chat.repo.picker.tree_payload): the paths, the
    locked and refused ones, the selection, pins and shed files as the rows show them;
    and the suffixes that have an outline."""
    session = _session(session_id)
    served = apps.get_app_config("chat").served
    repo = served.repository.indexed()
    chosen = tree.held_selection(session, served.runtime, repo)
    counts = served.counts
    payload = picker.tree_payload(repo.root, counts, chosen.active, chosen.outlines)
    payload["pinned"], payload["shed"] = sorted(chosen.pinned), sorted(chosen.shed)
    payload["outline_suffixes"] = outlines.suffixes()
    return JsonResponse(payload)


@require_http_methods(["GET", "POST"])
def files_rows(request: HttpRequest, session_id: str) -> HttpResponse:
    """The Files panel's rows drawn on the server (chat.web.panels.tree): GET `folder` its
    children (opening it), `total` the running total alone; otherwise the tree, with the
    folders `open` open (the first view's when none is named), or POST `found`: the
    filter's list, best first."""
    session = _session(session_id)
    served = apps.get_app_config("chat").served
    repo = served.repository.indexed()
    chosen = tree.held_selection(session, served.runtime, repo)
    rows = tree.TreeRows(served.files, repo.root, chosen)
    url = reverse("chat:files_rows", args=[session.id])
    data = request.POST if request.method == "POST" else request.GET
    if "total" in data:
        html = render_to_string("chat/_picker_total.html", {"total": rows.total(), "oob": True})
    elif "found" in data:
        try:
            matched = params.whole_number(data.get("matched", "0"), what="The count", high=10**9)
        except params.BadNumber as exc:
            return params.bad_request(exc)
        found, coming = data.getlist("found"), data.get("paths") == "coming"
        html = tree.render_tree(rows, url, found=found, matched=matched, coming=coming)
    elif "folder" in data:
        html = tree.render_tree(rows, url, folder=data["folder"])
    else:
        html = tree.render_tree(
            rows, url, opened=data.getlist("open") if "opened" in data else None
        )
    return HttpResponse(html)


@require_GET
def symbols_json(request: HttpRequest, session_id: str) -> JsonResponse:
    """The definitions the message box's @-completion offers (chat.repo.mentions)."""
    _session(session_id)
    served = apps.get_app_config("chat").served
    return JsonResponse(mentions.symbol_index(served.repository.root, served.maps))


@require_POST
def file_pin(request: HttpRequest, session_id: str) -> JsonResponse:
    """Pin or unpin one file: the Files panel (htmx) is answered with the pin drawn again
    and the total, anyone else with the pins now in force as JSON. A pin
    goes through the repository boundary: never an internal path, and a secret-shaped file
    only with `confirm=1` (the person confirmed it goes to the model provider)."""
    session = _session(session_id)
    path = request.POST.get("path", "")
    served = apps.get_app_config("chat").served
    repo = served.repository.indexed()
    try:
        if request.POST.get("pinned") == "true":
            _pin(session, path, repo, confirmed=request.POST.get("confirm") == "1")
        else:
            sessionsets.unpin(session, path, repo=repo)
    except sessionsets.SetsError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    hud = setchanges.refresh_sets(session.id, served)
    if request.headers.get("HX-Request") == "true":  # the Files panel's pin (picker.js)
        return HttpResponse(tree.pin_update(served.files, session.id, path, served))
    sets = tree.sets_named(session, hud, repo)
    return JsonResponse({"pinned": sessionsets.pinned_paths(session, repo), "sets": sets})


def _pin(session: Session, path: str, repo, *, confirmed: bool) -> None:
    found = boundary.verdict(path, root=repo.root) if path else boundary.OK
    if found.kind == "internal":
        raise sessionsets.SetsError(f"{path}: {found.reason}")
    if found.kind == "secret" and not confirmed:
        raise sessionsets.SetsError(boundary.secret_refusal(path))
    sessionsets.pin(session, path, repo=repo, allow_secret=confirmed)


@require_POST
def message_pin(request: HttpRequest, message_id: str) -> HttpResponse:
    """Toggle a message's pin: pinned messages stay verbatim through compaction."""
    message = Message.objects.filter(pk=message_id).select_related("session").first()
    if message is None or message.system_event or message.role not in ("user", "assistant"):
        raise Http404("no such message")
    message.pinned = request.POST.get("pinned", "true") == "true"
    message.save(update_fields=["pinned"])
    # The working history is derived from the rows, so the row's pin is all there is to set.
    return render(
        request, "chat/_pin_button.html", {"pin_id": message.id, "pinned": message.pinned}
    )
