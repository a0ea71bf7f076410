"""The chat pages: the newest session of the repository, one session, a new session."""

from __future__ import annotations

from django.apps import apps
from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotModified
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from chat.llm.runtime import chat_model
from chat.repo import sessionsets
from chat.repo.listings import FilesPanel
from chat.session import Wiring, end_expired_turn, live_turn
from chat.session.setchanges import current_hud
from chat.session.version import page_token
from chat.web import attachments
from chat.web.broadcast import session_socket_url
from chat.web.conversation import conversation_items
from chat.web.panels.tree import first_view
from history import selectors, services
from history.images import SHA256
from history.markup.rendered import RenderedReplies
from history.models import Image, Session


def _repository() -> str:
    return apps.get_app_config("chat").served.repository.path


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    session = selectors.session_latest(repository=_repository())
    if session is None:
        session = services.session_create(repository=_repository(), model=chat_model())
    return redirect("chat:session", session_id=session.id)


@require_GET
def session_page(request: HttpRequest, session_id: str) -> HttpResponse:
    session = selectors.session_get(session_id=session_id)
    if session is None:
        return render(request, "chat/missing_session.html", {"session_id": session_id}, status=404)
    # Seed 001 §3.6: files the session knows are reconciled with the disk on every load.
    served = apps.get_app_config("chat").served
    sessionsets.resume(session, served.repository.indexed())
    end_expired_turn(session.id)  # what a dead worker left streaming ends, truthfully
    context = _page_context(session, served, served.replies, served.files)
    return render(request, "chat/session.html", context)


@require_POST
def session_new(request: HttpRequest) -> HttpResponse:
    session = services.session_create(repository=_repository(), model=chat_model())
    return redirect("chat:session", session_id=session.id)


def _page_context(
    session: Session, wiring: Wiring, replies: RenderedReplies, files: FilesPanel
) -> dict:
    # Before drawing: a change from here on reaches the tab.
    seen = page_token(session.id, wiring.repository.root)
    messages = conversation_items(session, replies=replies)
    streaming = bool(live_turn(session))
    return {
        "streaming": streaming,
        "socket_url": session_socket_url(session.id, streaming=streaming, seen=seen),
        "hud": current_hud(session, wiring),
        "files": first_view(files, session, wiring),
        "session": session,
        "messages": messages,
        "model": chat_model(session.model),
        "repository_name": wiring.repository.root.name,
        "repository_path": wiring.repository.root,
        # The composer checks a message against these before sending it (chat.js).
        "max_message_chars": settings.ACDC_MAX_MESSAGE_CHARS,
        "max_frame_bytes": settings.ACDC_MAX_FRAME_BYTES,
    }


# -- images: upload to the composer's tray, serve, re-attach ---------------------------

# Behind the access token (always, acdc.access) no shared cache (a proxy) may keep an image
# to hand to others; the browser keeps it for good (its name is its content's hash).
IMAGE_CACHE_CONTROL = "private, max-age=31536000, immutable"


@require_POST
def image_upload(request: HttpRequest, session_id: str) -> HttpResponse:
    # Too large or too many files is refused before this (attachments.UploadGuardMiddleware).
    if selectors.session_get(session_id=session_id) is None:
        problem = f"There is no session {session_id!r}."
        return attachments.fragment(request, attachments.Accepted(errors=[problem]), 404)
    pending = attachments.pending_shas(request.POST.getlist("image"))
    decodes = apps.get_app_config("chat").served.decodes
    accepted = attachments.accept_uploads(request.FILES.getlist("file"), pending, decodes)
    return attachments.fragment(request, accepted)


@require_GET
def image_chip(request: HttpRequest, sha: str) -> HttpResponse:
    pending = attachments.pending_shas(request.GET.getlist("image"))
    return attachments.fragment(request, attachments.accept_existing(sha, pending))


@require_GET
def image_file(request: HttpRequest, sha: str) -> HttpResponse:
    return _image_response(request, sha, thumbnail=False)


@require_GET
def image_thumb(request: HttpRequest, sha: str) -> HttpResponse:
    return _image_response(request, sha, thumbnail=True)


def _image_response(request: HttpRequest, sha: str, *, thumbnail: bool) -> HttpResponse:
    etag = f'"{sha}-thumb"' if thumbnail else f'"{sha}"'
    field = "thumbnail" if thumbnail else "data"
    image = Image.objects.only("mime", field).filter(pk=sha).first() if SHA256.match(sha) else None
    if image is None:
        raise Http404("No such image.")
    if etag in request.headers.get("If-None-Match", ""):
        response = HttpResponseNotModified()
    else:
        body = bytes(image.thumbnail if thumbnail else image.data)
        response = HttpResponse(body, content_type="image/webp" if thumbnail else image.mime)
    response["ETag"] = etag
    response["Cache-Control"] = IMAGE_CACHE_CONTROL
    return response
