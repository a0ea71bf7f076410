"""The optional Commit of the files acdc changed in a session (edits on; only when pressed).

GET draws the form in Session tools: the files it would commit, a message proposed from what
changed, and, when the session's edits changed a hook the commit would run, which one and
two buttons that say what to do with it (run it, or commit without hooks). POST commits
exactly those files (`chat.repo.edits.commit`); a POST that does not say what to do with a
changed hook (a form drawn before the hook changed) commits nothing and draws the choice.
Every refusal is a line in the fragment, never a server error. `commit_frame` is the
same form as an out-of-band fragment: the frames of Accept, Undo, Apply again and
Auto-apply carry it, so the form appears (or goes) as soon as there is something (or
nothing) to commit, without a reload.
"""

from __future__ import annotations

from django.apps import apps
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.views.decorators.http import require_http_methods

from chat.repo import edittools, indexing
from chat.repo.edits.commit import CommitRefused, changed_hooks, changes, commit
from chat.repo.edits.commit_message import propose
from history import selectors
from history.models import Session

_HOOK_CHOICES = ("run", "skip")


def commit_context(
    session: Session,
    repo: indexing.Repository,
    *,
    error: str = "",
    note: str = "",
    message: str = "",
) -> dict:
    """What the form shows: the files it would commit, the message box's text, the hooks."""
    found = changes(session, repo=repo)
    return {
        "session": session,
        "commit_paths": list(found),
        "commit_message": message or propose(session, found),
        "commit_hooks": changed_hooks(session, repo=repo) if found else [],
        "commit_error": error,
        "commit_note": note,
    }


def commit_frame(session: Session, repo: indexing.Repository) -> str:
    """The form (`edit-commit`) drawn again out of band, for a tab's socket frame."""
    context = {**commit_context(session, repo), "oob": True}
    return render_to_string("chat/_edit_commit.html", context)


@require_http_methods(["GET", "POST"])
def edits_commit(request: HttpRequest, session_id: str) -> HttpResponse:
    session = selectors.session_get(session_id=session_id)
    if session is None or not edittools.enabled():
        raise Http404("no such session")
    repo = apps.get_app_config("chat").served.repository.indexed()
    extra: dict[str, str] = {}
    if request.method == "POST":
        message = request.POST.get("message", "")
        hooks = request.POST.get("hooks", "")
        try:
            done = commit(
                session,
                message,
                repo=repo,
                hooks=hooks if hooks in _HOOK_CHOICES else "ask",
            )
        except CommitRefused as exc:
            extra = {"error": str(exc), "message": message}
        else:
            skipped = " (no hook ran)" if hooks == "skip" else ""
            extra = {"note": f"Committed {len(done.paths)} file(s){skipped}: {done.summary}"}
    return render(request, "chat/_edit_commit.html", commit_context(session, repo, **extra))
