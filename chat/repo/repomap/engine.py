"""The repository map for one turn: built from the session's sets, handed to the engine.

The main map goes where seed 000 puts it (the system message, under "Repository
Structure"); the focus part goes to the engine's `map_focus`, which the prompt places after
the history. The graph's tiers go to the stability tracker, which takes them on a first
request and when the cached prefix is known lost at the `now` of the request about to be
prepared (a gap past its lifetime, another model). A map that cannot be built costs the
turn nothing but the map: the failure is logged and the request goes out without it
(fail open).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from django.conf import settings

from chat.repo.repomap.builder import RepoMap, RepoMaps, map_budget
from chat.repo.repomap.store import FILE_NAME, SymbolStore
from contextcore.manager import ContextManager

log = logging.getLogger(__name__)
RECENT_MESSAGES = 2  # history messages (besides the new one) whose identifiers steer the focus
WARMING = (
    "Reading the repository for its map (the first build after the server started); "
    "the request goes out when it is ready."
)


def warm(maps: RepoMaps, root: Path | None = None) -> bool:
    """At start-up: build the map's symbols and graph in the background, unless
    ACDC_MAP_TOKENS=0 turned the map off. Whether a build started."""
    if settings.ACDC_MAP_TOKENS == 0:
        return False
    use_stored_symbols(maps)
    maps.warm_in_background(Path(root or settings.ACDC_REPO))
    return True


def use_stored_symbols(maps: RepoMaps) -> None:
    """The process's map keeps its symbols in the data folder from now on (read at its
    next look), so the next start parses only what changed meanwhile."""
    if maps.store is None:
        maps.store = SymbolStore(Path(settings.ACDC_DATA_DIR) / FILE_NAME)


def warming_notice(maps: RepoMaps, root: Path | None = None) -> str:
    """What a turn shows while it waits for the start-up build ("" when there is none).
    It waits rather than go without the map: a first turn without it would put the map
    into the second turn's cached prefix and lose that cache, which costs more than the
    few seconds the build has left."""
    return WARMING if maps.warming(Path(root or settings.ACDC_REPO)) else ""


def fill(
    manager: ContextManager,
    maps: RepoMaps,
    *,
    selected: Iterable[str],
    pinned: Iterable[str],
    user_text: str,
    root: Path | None = None,
    now: float | None = None,
) -> RepoMap | None:
    budget = map_budget(manager.facts.max_input_tokens, settings.ACDC_MAP_TOKENS)
    recent = [*_texts(manager.recent_history(RECENT_MESSAGES)), user_text]
    use_stored_symbols(maps)
    try:
        built = maps.build(
            Path(root or settings.ACDC_REPO),
            budget=budget,
            count=manager.counter.count_text,
            selected=selected,
            pinned=pinned,
            recent=recent,
        )
    except Exception:  # the map is an aid; the turn goes on without it
        log.exception("the repository map could not be built")
        built = None
    manager.update_context_texts(repo_map=built.main if built else "")
    manager.map_focus = built.focus if built else ""
    if built and built.tiers:
        tiers = {f"file:{p}": tier for p, tier in built.tiers}
        manager.stability.seed_tiers(tiers, now=now, model=manager.facts.name)
    return built


def _texts(messages: Sequence[dict]) -> list[str]:
    return [m["content"] for m in messages if isinstance(m.get("content"), str)]
