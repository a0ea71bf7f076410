"""Changes to a session's context outside a turn: the selection and the start-up restore.

The command line's selection (`select_files`: --add/--drop/--pin/--unpin), the page's
(`change_selection`, and `refresh_sets` after the model's tools, the disk or a rollback
changed the sets) and the start-up restore of the newest session. Every choice passes the
repository boundary; each change is made under the session's short hold, and the engine
and the saved HUD (one preview) follow. Non-goals: the turn's own request (`preparation`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from django.conf import settings

from chat.repo import boundary, indexing, instructions, sessionsets
from chat.session import SessionBusy, SessionContext, Wiring, held, hud, setup, suggesting
from chat.session.sets import sync_sets, unique_notices
from history.models import Message, Session
from history.selectors import session_latest


def select_files(
    session_id: str,
    *,
    add: Sequence[str] = (),
    drop: Sequence[str] = (),
    pin: Sequence[str] = (),
    unpin: Sequence[str] = (),
    model: str = "",
    confirmed: Collection[str] = frozenset(),
    wiring: Wiring,
) -> list[str]:
    """Change a session's object sets from the command line (`--add/--drop/--pin/--unpin`);
    returns a message for every refusal. A secret-shaped file is added or pinned only when
    it is in `confirmed`."""
    session = Session.objects.get(pk=session_id)
    repo = wiring.repository.indexed()
    added, secrets, problems = _screen_choice(session, add, confirmed, repo)
    pinned, pin_secrets, pin_problems = _screen_choice(session, pin, confirmed, repo)
    problems += pin_problems
    steps = [
        (drop, sessionsets.deactivate, "was not selected"),
        (added, sessionsets.activate, ""),
        (pinned, sessionsets.pin, ""),
        (unpin, sessionsets.unpin, "was not pinned"),
    ]
    for paths, change, refusal in steps:
        for path in paths:
            extra = {}
            if change in (sessionsets.activate, sessionsets.pin):
                extra["allow_secret"] = path in secrets or path in pin_secrets
            try:
                change(session, path, repo=repo, **extra)
            except sessionsets.SetsError as exc:
                problems.append(f"{path} {refusal}" if refusal else str(exc))
    with held(session_id) as owner:
        model = model or session.model or settings.ACDC_MODEL
        ctx = SessionContext.open(session_id, wiring, model=model, owner=owner)
        repo = ctx.repository.indexed()
        problems += [n.text for n in sync_sets(ctx.session, ctx.manager, ctx.maps, repo)[0]]
        ctx.commit(hud=hud.figures(ctx))
    return problems


def _screen_choice(
    session: Session, paths: Sequence[str], confirmed: Collection[str], repo: indexing.Repository
) -> tuple[list[str], set[str], list[str]]:
    """The person's choice through the repository boundary: (paths that may go on, the
    secrets among them, refusals). A secret goes on when confirmed now, or when it is
    already in the session's active or pinned set (confirmed before)."""
    allowed, secrets, problems = [], set(), []
    for path in paths:
        found = boundary.verdict(path, root=repo.root) if path else boundary.OK
        if found.kind == "internal":
            problems.append(f"{path} was not added: {found.reason}")
        elif found.kind == "secret" and not (
            path in confirmed or sessionsets.confirmed_secret(session.id, path, repo)
        ):
            problems.append(boundary.secret_refusal(path))
        else:
            allowed.append(path)
            if found.kind == "secret":
                secrets.add(path)
    return allowed, secrets, problems


@dataclass(frozen=True)
class Wanted:
    """A selection asked for: the active files, those sent as outlines, the secret-shaped
    files the person confirmed now, and a note for the tab that chose."""

    paths: tuple[str, ...]
    outlines: frozenset[str] = frozenset()
    confirmed: frozenset[str] = frozenset()
    note: str = ""


Chosen = tuple[list[str], list[str]]  # the active files, those of them sent as outlines
Resolve = Callable[[list[str], list[str]], Wanted]


@dataclass(frozen=True)
class SelectionChange:
    """What a choice did: refusals and notices, the HUD preview, the selection before and
    after it, the files sending would have shed before it, the chooser's note."""

    problems: list[str]
    hud: dict
    before: Chosen
    after: Chosen
    shed_before: tuple[str, ...] = ()
    note: str = ""
    pinned: tuple[str, ...] = ()


def change_selection(session_id: str, resolve: Resolve, wiring: Wiring) -> SelectionChange:
    """One choice, reading the session once: `resolve` turns the selection as it is
    (active files, outlines) into the one wanted, which passes the boundary; the engine
    and the HUD follow. While a turn runs the HUD is a preview (the turn writes the header)."""
    try:
        with held(session_id) as owner:
            return _change(session_id, resolve, owner, wiring)
    except SessionBusy:
        return _change(session_id, resolve, "", wiring)


def _change(session_id: str, resolve: Resolve, owner: str, wiring: Wiring) -> SelectionChange:
    ctx = SessionContext.open(session_id, wiring, owner=owner)
    session = ctx.session
    repo = ctx.repository.indexed()
    before = _chosen(session, repo)
    shed_before = ((session.context_state or {}).get("hud") or {}).get("shed") or ()
    wanted = resolve(*before)
    allowed, secrets, problems = _screen_choice(session, wanted.paths, wanted.confirmed, repo)
    refused = sessionsets.set_active_files(
        session, allowed, repo=repo, confirmed=secrets, outlines=wanted.outlines
    )
    problems += [f"{path} was not added: {reason}" for path, reason in _by_path(refused, allowed)]
    problems += [n.text for n in sync_sets(session, ctx.manager, ctx.maps, repo)[0]]
    data = hud.figures(ctx)
    if owner:
        ctx.commit(hud=data)
    active, outlines, pinned = sessionsets.file_choice(session, repo)
    after = (list(active), list(outlines))
    return SelectionChange(
        problems, data, before, after, tuple(shed_before), wanted.note, tuple(pinned)
    )


def _chosen(session: Session, repo: indexing.Repository) -> Chosen:
    active, outlines, _ = sessionsets.file_choice(session, repo)
    return list(active), list(outlines)


def refresh_sets(session_id: str, wiring: Wiring) -> dict:
    """After the model's tools or the disk changed the sets: the engine and the HUD follow."""
    return _follow_sets(session_id, wiring)[1]


def _follow_sets(session_id: str, wiring: Wiring) -> tuple[list[str], dict]:
    """The engine takes the sets as they are now, and the HUD shows it. While a turn runs
    the header is its to write: the HUD is a preview, and the next turn reads the sets."""
    try:
        with held(session_id) as owner:
            return _sync_sets_and_hud(session_id, owner, wiring)
    except SessionBusy:
        return _sync_sets_and_hud(session_id, "", wiring)


def _sync_sets_and_hud(session_id: str, owner: str, wiring: Wiring) -> tuple[list[str], dict]:
    ctx = SessionContext.open(session_id, wiring, owner=owner)
    repo = ctx.repository.indexed()
    notices = [n.text for n in sync_sets(ctx.session, ctx.manager, ctx.maps, repo)[0]]
    suggesting.follow(ctx)
    data = hud.figures(ctx)
    if owner:
        ctx.commit(hud=data)
    return notices, data


def _by_path(messages: list[str], paths: Sequence[str]) -> list[tuple[str, str]]:
    """Pair each refusal with the path it is about (refusals name their path)."""
    pairs = []
    for message in messages:
        path = next((p for p in paths if p and p in message), "")
        reason = message.removeprefix(f"{path}: ") if path else message
        pairs.append((path or "a file", reason))
    return pairs


def restore_latest_session(repository: str, wiring: Wiring) -> tuple[Session | None, list[str]]:
    """At start-up: load the newest session's context (messages and object sets), reconcile
    its files with the disk (seed 001 §3.6), drop active files that no longer exist with a
    notice stored in the session, and warm the token counts, so the first page and the
    first turn find everything ready."""
    session = session_latest(repository=repository)
    if session is None:
        return None, []
    try:
        with held(session.id) as owner:
            return _restore(session.id, owner, wiring)
    except SessionBusy:  # another worker is answering in it: that turn keeps it current
        return session, []


def _restore(session_id: str, owner: str, wiring: Wiring) -> tuple[Session, list[str]]:
    ctx = SessionContext.open(session_id, wiring, owner=owner)
    repo = ctx.repository.indexed()
    sessionsets.resume(ctx.session, repo)
    sync_notices = sync_sets(ctx.session, ctx.manager, ctx.maps, repo)[0]
    found = unique_notices([*ctx.manager.restore_notices, *sync_notices])
    notices = [f"Dropped from the selection on restore: {n.text}" for n in found]
    for text in notices:
        ctx.append(role=Message.Role.SYSTEM, content=text, system_event=True)
    # The figures are left to the first page that asks (`current_hud`): counting them here
    # would load the token counter's encoding (about 40 MB) before anyone looks, and a
    # restart would hold more than a first start. The saved ones stay, marked out of date.
    ctx.commit(hud={**ctx.hud(), "instructions_mark": RESTORED})
    return ctx.session, notices


RESTORED = "restored"  # never a mark of files on disk: figures a start left out of date


def current_hud(session: Session, wiring: Wiring) -> dict | None:
    """The figures to draw: the saved ones, unless the instructions on disk changed since
    they were figured (then new ones); None for a session with nothing to show yet."""
    saved = (session.context_state or {}).get("hud")
    root = wiring.repository.root
    if saved is None and not instructions.present(root):
        return None
    if saved is not None and saved.get("instructions_mark") == instructions.mark(root):
        sent = bool(saved.get("requests"))  # the servers may have changed since: look again
        return {**saved, "tools_note": setup.mcp_change_note(session.id, sent=sent)}
    return refresh_sets(session.id, wiring)


@dataclass(frozen=True)
class Choice:
    """A select frame's fields (chat.live.protocol reads them from the wire)."""

    choose: str = ""  # "" (the whole selection), file, folder, outline, outline-folder
    paths: tuple[str, ...] = ()
    on: bool = False
    confirm: tuple[str, ...] = ()
    outline: tuple[str, ...] = ()
    selection: str = ""
