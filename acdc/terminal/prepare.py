"""What `acdc chat` does before its message is sent, in this process or in the server's.

Find the session (`--session`, else the repository's latest, or a new one with `--new`),
check every `--add` and `--pin` against the repository boundary before anything changes,
then change the selection. A user's mistake is a `CommandError` (exit status 2) and
nothing is changed or sent; what the selection could not take comes back as lines to show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from acdc.errors import CommandError
from chat.llm.runtime import chat_model
from chat.repo import boundary, indexing, sessionsets
from chat.session import Wiring
from chat.session.setchanges import select_files
from history import selectors, services
from history.models import ContentObject, Session


@dataclass(frozen=True)
class ChatRequest:
    """The flags of one `acdc chat`, as the command line or the client's request gives them."""

    message: str
    session: str = ""
    new: bool = False
    model: str = ""
    add: list[str] = field(default_factory=list)
    drop: list[str] = field(default_factory=list)
    pin: list[str] = field(default_factory=list)
    unpin: list[str] = field(default_factory=list)
    allow_secret: list[str] = field(default_factory=list)
    instructions: bool | None = None  # --instructions / --no-instructions: the session's switch
    apply: bool = False  # --apply: the reply's edits apply whole when it ends
    check: str = ""  # --check NAME: run it once the edits applied, one round to fix it


@dataclass
class Prepared:
    session_id: str
    problems: list[str]  # what the selection could not take, one line each


def find_session(request: ChatRequest) -> Session | None:
    """The session the message goes to; None means a new one (made by `prepare`)."""
    repository = str(settings.ACDC_REPO)
    if request.session:
        session = selectors.session_get(session_id=request.session)
        if session is None or session.repository != repository:
            raise CommandError(f"there is no session {request.session!r} for {repository}")
        return session
    return None if request.new else selectors.session_latest(repository=repository)


def prepare(request: ChatRequest, session: Session | None, wiring: Wiring) -> Prepared:
    """Check the choice, make the session if needed, and change its selection."""
    allowed = set(request.allow_secret)
    check_choice([*request.add, *request.pin], allowed, session, wiring.repository.indexed())
    if session is None:
        repository = str(settings.ACDC_REPO)
        session = services.session_create(repository=repository, model=chat_model(request.model))
    if request.instructions is not None:  # the session's switch, as the page's
        Session.objects.filter(pk=session.pk).update(instructions=request.instructions)
    problems: list[str] = []
    if request.add or request.drop or request.pin or request.unpin:
        problems = select_files(
            session.id,
            add=request.add,
            drop=request.drop,
            pin=request.pin,
            unpin=request.unpin,
            model=request.model,
            confirmed=allowed,
            wiring=wiring,
        )
    return Prepared(session.id, list(problems))


def check_choice(
    paths: list[str], allowed: set[str], session: Session | None, repo: indexing.Repository
) -> None:
    """Every --add and --pin names a file or folder of the repository that may be sent (a
    secret-shaped one confirmed by --allow-secret, or earlier in the session), or an object
    of the session; else an error (exit status 2) before anything changes or is sent."""
    root = Path(settings.ACDC_REPO)
    problems = []
    for path in paths:
        found = boundary.verdict(path, root=root)
        known = session is not None and _session_object(session, path)
        if found.kind == "internal":
            problems.append(f"{path} cannot be sent: {found.reason}")
        elif not known and not (root / path).exists():
            problems.append(f"{path}: no such file in {root}")
        elif found.kind == "secret" and path not in allowed and not _confirmed(session, path, repo):
            problems.append(f"{path} looks like a secret; add --allow-secret {path} to send it")
    if problems:
        raise CommandError("; ".join(problems) + " (nothing was sent)")


def _session_object(session: Session, ref: str) -> bool:
    return ContentObject.objects.filter(pk=ref, session_links__session=session).exists()


def _confirmed(session: Session | None, path: str, repo: indexing.Repository) -> bool:
    return session is not None and sessionsets.confirmed_secret(session.id, path, repo)
