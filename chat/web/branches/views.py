"""Switch the version shown, and fork a session at a message (POST, CSRF-protected).

Switching answers htmx with the conversation and the HUD drawn again (and tells the
session's other tabs the same frame); without htmx it goes back to the page. A fork answers with a
redirect to the new session (`HX-Redirect` for htmx). A refusal is a message, never a
server error: in the conversation's error line for htmx, as a 409 page otherwise.
"""

from __future__ import annotations

from django.apps import apps
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.middleware import HtmxDetails

from chat.session import setchanges
from chat.turn.branches.fork import fork
from chat.turn.branches.versions import BranchRefused, switch
from chat.web.broadcast import to_session
from chat.web.conversation import render_conversation
from chat.web.fragments import render_error, render_hud
from history.models import Message, Session


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails  # set by django_htmx's middleware


def _session(message_id: str) -> Session:
    message = Message.objects.filter(pk=message_id).select_related("session").first()
    if message is None:
        raise Http404("no such message")
    return message.session


def _refused(request: HtmxHttpRequest, exc: BranchRefused) -> HttpResponse:
    if request.htmx:
        response = HttpResponse(render_error(str(exc)))
        response["HX-Reswap"] = "none"  # the error frame places itself (out of band)
        return response
    return HttpResponse(str(exc), status=409, content_type="text/plain; charset=utf-8")


@require_POST
def version_show(request: HtmxHttpRequest, message_id: str) -> HttpResponse:
    session = _session(message_id)
    served = apps.get_app_config("chat").served
    try:
        switch(session.id, message_id, served)
    except BranchRefused as exc:
        return _refused(request, exc)
    if not request.htmx:
        return redirect("chat:session", session_id=session.id)
    html = render_conversation(session, oob=True, replies=served.replies) + render_hud(
        setchanges.refresh_sets(session.id, served)
    )
    # Every tab of the session draws the frame, the one that clicked too: its socket
    # usually brings the frame before this answer, and an answer with the same panels
    # would then look for them from a form no longer in the page (an htmx error).
    to_session(session.id, html, act=request.act)
    return HttpResponse(status=204)


@require_POST
def session_fork(request: HtmxHttpRequest, message_id: str) -> HttpResponse:
    session = _session(message_id)
    try:
        child = fork(session.id, message_id)
    except BranchRefused as exc:
        return _refused(request, exc)
    url = reverse("chat:session", kwargs={"session_id": child.id})
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)
