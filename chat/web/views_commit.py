"""The page's optional Commit: the files acdc changed in the session, with the person's message.

GET draws the small form (the files git sees as changed, and a message proposed from the
turn that the person may replace); POST commits exactly those files through
`chat.repo.edits.commit` and draws the form again with git's summary, or with the reason
nothing was committed. CSRF-protected like every form; only with edits on (404 otherwise).
Nothing here runs unless the person presses the button.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from chat.repo import edittools, sessionsets
from chat.repo.edits.commit import CommitRefused, changed_paths, commit, proposed_message
from history import selectors
from history.models import Session


def commit_context(session: Session, *, error: str = "", note: str = "", message: str = "") -> dict:
    """What the form shows: the files it would commit and the message box's text."""
    repo = sessionsets.repository()
    return {
        "session": session,
        "commit_paths": changed_paths(session, repo=repo),
        "commit_message": message or proposed_message(session),
        "commit_error": error,
        "commit_note": note,
    }


@require_http_methods(["GET", "POST"])
def edits_commit(request: HttpRequest, session_id: str) -> HttpResponse:
    session = selectors.session_get(session_id=session_id)
    if session is None or not edittools.enabled():
        raise Http404("no such session")
    extra: dict[str, str] = {}
    if request.method == "POST":
        message = request.POST.get("message", "")
        try:
            done = commit(session, message, repo=sessionsets.repository())
        except CommitRefused as exc:
            extra = {"error": str(exc), "message": message}
        else:
            extra = {"note": f"Committed {len(done.paths)} file(s): {done.summary}"}
    return render(request, "chat/_edit_commit.html", commit_context(session, **extra))
