"""The session's "Suggested for this message": ranked per message, chosen by the person.

`fill` runs in each turn's preparation, after the map: it ranks the repository for the
message and the recent turns (`chat.repo.suggest.ranking`) and hands the engine the regions
that fit `ACDC_SUGGEST_TOKENS` (0: none at all). Files in the context are never suggested.
The person's choices live on the session row (`Session.suggestions`, so a rollback of the
context never reverts them): off for the session, removed regions (never suggested again
in it), pinned ones (suggested first in every request). `follow` applies a choice to the
suggestions the engine holds now, so the Context panel shows it at once.
Non-goals: ranking, where the part goes in the request (contextcore's).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from django.conf import settings

from chat.repo.repomap.symbols import language_of
from chat.repo.suggest import ranking
from chat.session.context import SessionContext
from contextcore.manager import ContextManager
from contextcore.prompt.suggested import Suggested
from history.models import Session

RECENT_MESSAGES = 2  # history messages whose words steer the ranking besides the new one
PINNED_SCORE = 1e6


def choices(session: Session) -> dict[str, Any]:
    found = session.suggestions if isinstance(session.suggestions, dict) else {}
    return {
        "off": bool(found.get("off")),
        "removed": [str(k) for k in found.get("removed", ())],
        "pinned": [str(k) for k in found.get("pinned", ())],
    }


def enabled(session: Session) -> bool:
    return settings.ACDC_SUGGEST_TOKENS > 0 and not choices(session)["off"]


def fill(ctx: SessionContext, *, in_context: Iterable[str], user_text: str) -> None:
    """The engine's suggestions for this message (none when off)."""
    manager = ctx.manager
    manager.suggested = Suggested()
    if not enabled(ctx.session):
        return
    root = ctx.repository.root
    read = ctx.maps.for_suggestions(root)
    if read is None:
        return  # the repository is still being read
    symbols, graph, index = read
    recent = [m["content"] for m in manager.recent_history(RECENT_MESSAGES)]
    message = ranking.Message(user_text, tuple(t for t in recent if isinstance(t, str)))
    chosen = choices(ctx.session)
    choice = ranking.Choice(frozenset(chosen["removed"]), frozenset(chosen["pinned"]))
    held = set(in_context)
    found = ranking.rank(message, symbols, index, graph, held)
    found = _pinned(symbols, choice, held) + found
    regions = ranking.regions(
        found,
        root,
        budget=settings.ACDC_SUGGEST_TOKENS,
        count=manager.counter.count_text,
        choice=choice,
        language=language_of,
    )
    manager.suggested = Suggested.of(regions)


def _pinned(symbols, choice: ranking.Choice, in_context: set[str]) -> list[ranking.Candidate]:
    """The pinned regions, wherever the message points (unless their file is in context)."""
    found = []
    for key in sorted(choice.pinned):
        path, _, name = key.partition("::")
        file = symbols.get(path)
        if file is None or path in in_context:
            continue
        for definition in file.definitions:
            if definition.name == name:
                found.append(ranking.Candidate(path, definition, PINNED_SCORE, {"pinned"}))
                break
    return found


def follow(ctx: SessionContext) -> None:
    """The engine's suggestions as the session's choices and files have them now (after
    the sets were synced): a region removed, or of a file ticked since, is gone at once."""
    chosen = choices(ctx.session)
    manager = ctx.manager
    if chosen["off"] or settings.ACDC_SUGGEST_TOKENS <= 0:
        manager.suggested = Suggested()
        return
    pinned, removed = set(chosen["pinned"]), set(chosen["removed"])
    held = {path for path, _ in manager.file_context.items()}  # ticked since: it wins
    kept = [replace(r, pinned=r.key in pinned) for r in manager.suggested.regions]
    manager.suggested = Suggested.of(
        [r for r in kept if r.key not in removed and r.path not in held]
    )


def choose(session_id: str, *, off: bool | None = None, remove: str = "", pin: str = "") -> None:
    """Record a choice: suggestions off or on, a region removed, a region pinned or not
    (`pin` prefixed with "-" unpins)."""
    session = Session.objects.get(pk=session_id)
    chosen = choices(session)
    if off is not None:
        chosen["off"] = off
    if remove and remove not in chosen["removed"]:
        chosen["removed"].append(remove)
        chosen["pinned"] = [k for k in chosen["pinned"] if k != remove]
    if pin.startswith("-"):
        chosen["pinned"] = [k for k in chosen["pinned"] if k != pin[1:]]
    elif pin and pin not in chosen["pinned"]:
        chosen["pinned"].append(pin)
        chosen["removed"] = [k for k in chosen["removed"] if k != pin]
    Session.objects.filter(pk=session_id).update(suggestions=chosen)


def summary(session_id: str, manager: ContextManager, tokens: int, *, on: bool) -> dict:
    """The Context panel's part: each region with its reasons, its tokens, the switch."""
    return {
        "session_id": session_id,
        "on": on,
        "tokens": tokens if manager.suggested.regions else 0,
        "regions": [r.as_dict() for r in manager.suggested.regions],
        "budget": settings.ACDC_SUGGEST_TOKENS,
    }


def report(manager: ContextManager) -> list[list[Any]]:
    """What the dry-run report lists: [where, tokens, why] per region."""
    count = manager.counter.count_text
    return [
        [f"{r.path}:{r.start}-{r.end} {r.name}".rstrip(), count(r.text), list(r.why)]
        for r in manager.suggested.regions
    ]
