"""The history browser: sessions of this repository, search, one session, and its actions.

Every htmx request has a plain-HTTP equivalent (the search form submits to the index,
delete asks on its own page), and every write is a POST behind CSRF. An unknown session
is a 404 page, never an error. History does not import chat: "Load into chat" redirects
to the chat page, and images link to the chat app's image URLs (by name).
"""

from __future__ import annotations

from django.apps import apps
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.middleware import HtmxDetails

from history import selectors, services
from history.interchange.bundle import export_text
from history.interchange.export import version_labels
from history.models import Message, Session
from history.search import SearchResults, search_messages

SESSION_LIMIT = 100
HIT_LIMIT = 30
TITLE_MAX = Session._meta.get_field("title").max_length


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails  # set by django_htmx's middleware


def _served():
    """The process's served object, which the chat app builds (history imports nothing of
    chat; it reads two parts by name): the repository it serves, the histories it holds."""
    return apps.get_app_config("chat").served


def _repository() -> str:
    return _served().repository.path


def _search(request: HttpRequest) -> SearchResults:
    role = request.GET.get("role", "")
    return search_messages(
        repository=_repository(),
        query=request.GET.get("q", ""),
        role=role if role in Message.Role.values else None,
        limit=HIT_LIMIT,
        recent=_served().histories,
    )


def _missing(request: HttpRequest, session_id: str) -> HttpResponse:
    return render(request, "history/missing_session.html", {"session_id": session_id}, status=404)


def _session_or_none(session_id: str) -> Session | None:
    return Session.objects.for_repository(_repository()).filter(pk=session_id).first()


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    context = {
        "sessions": selectors.list_sessions(repository=_repository(), limit=SESSION_LIMIT),
        "results": _search(request),
        "role": request.GET.get("role", ""),
        "roles": Message.Role.choices,
    }
    return render(request, "history/index.html", context)


@require_GET
def search(request: HtmxHttpRequest) -> HttpResponse:
    if not request.htmx:
        return redirect(f"{reverse('history:index')}?{request.GET.urlencode()}")
    return render(request, "history/_results.html", {"results": _search(request)})


@require_GET
def session_detail(request: HttpRequest, session_id: str) -> HttpResponse:
    if _session_or_none(session_id) is None:
        return _missing(request, session_id)
    detail = selectors.get_session(session_id=session_id)
    return render(request, "history/session.html", _detail_context(detail))


def _detail_context(detail: selectors.SessionDetail, **extra) -> dict:
    versions = version_labels(detail.messages)
    items = [
        {"message": m, "images": detail.images.get(m.id, []), "version": versions.get(m.id)}
        for m in detail.messages
    ]
    return {"detail": detail, "session": detail.session, "items": items, **extra}


@require_POST
def session_load(request: HttpRequest, session_id: str) -> HttpResponse:
    if _session_or_none(session_id) is None:
        return _missing(request, session_id)
    services.session_touch(session_id=session_id)
    return redirect("chat:session", session_id=session_id)


@require_POST
def session_rename(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _session_or_none(session_id)
    if session is None:
        return _missing(request, session_id)
    title = " ".join(request.POST.get("title", "").split())
    if not title or len(title) > TITLE_MAX:
        error = f"A title needs 1 to {TITLE_MAX} characters."
        detail = selectors.get_session(session_id=session_id)
        context = _detail_context(detail, rename_error=error, proposed_title=title)
        return render(request, "history/session.html", context, status=400)
    session.title = title
    session.save(update_fields=["title"])
    return redirect("history:session", session_id=session_id)


@require_http_methods(["GET", "POST"])
def session_delete(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _session_or_none(session_id)
    if session is None:
        return _missing(request, session_id)
    if request.method == "GET":
        count = session.messages.count()
        return render(request, "history/confirm_delete.html", {"session": session, "count": count})
    session.delete()
    return redirect("history:index")


@require_GET
def export_markdown(request: HttpRequest, session_id: str) -> HttpResponse:
    detail = selectors.get_session(session_id=session_id)
    if detail is None or _session_or_none(session_id) is None:
        return _missing(request, session_id)
    text = export_text(detail, "md")  # its images inline
    return _download(text, f"{session_id}.md", "text/markdown; charset=utf-8")


@require_GET
def export_jsonl(request: HttpRequest, session_id: str) -> HttpResponse:
    detail = selectors.get_session(session_id=session_id)
    if detail is None or _session_or_none(session_id) is None:
        return _missing(request, session_id)
    text = export_text(detail, "jsonl")
    return _download(text, f"{session_id}.jsonl", "application/jsonl; charset=utf-8")


def _download(text: str, filename: str, content_type: str) -> HttpResponse:
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
