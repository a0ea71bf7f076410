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
WARMING = "Reading the repository for its map"  # how the notice begins
# How long a turn waits for the start-up build before it goes without the map: long enough
# for most repositories' (the first turn's map then sits in the cached prefix from the
# start), short enough that a huge one never keeps the first turn silent.
MAP_WAIT_SECONDS = 5.0


def warm(maps: RepoMaps, root: Path) -> bool:
    """At start-up: build the map's symbols and graph in the background, unless
    ACDC_MAP_TOKENS=0 turned the map off. Whether a build started."""
    if settings.ACDC_MAP_TOKENS == 0:
        return False
    use_stored_symbols(maps)
    maps.warm_in_background(Path(root), bodies=settings.ACDC_SUGGEST_TOKENS > 0)
    return True


def use_stored_symbols(maps: RepoMaps) -> None:
    """The process's map keeps its symbols in the data folder from now on (read at its
    next look), so the next start parses only what changed meanwhile."""
    if maps.store is None:
        maps.store = SymbolStore(Path(settings.ACDC_DATA_DIR) / FILE_NAME)


def warming_notice(maps: RepoMaps, root: Path) -> str:
    """What a turn shows while the start-up build runs ("" when none does), with how far
    it has got. The turn waits for it a few seconds (a first turn without the map puts
    the map into the second turn's cached prefix and loses that cache), then goes
    without it rather than keep the person waiting on a huge repository."""
    root = Path(root)
    if not maps.warming(root):
        return ""
    found = maps.progress(root)
    so_far = f": {found[0]:,} of {found[1]:,} files so far" if found else " (listing its files)"
    return (
        f"{WARMING}{so_far}. This request waits for it up to {MAP_WAIT_SECONDS:g} s, then "
        "goes without the map; a later one has it."
    )


def fill(
    manager: ContextManager,
    maps: RepoMaps,
    *,
    selected: Iterable[str],
    pinned: Iterable[str],
    user_text: str,
    root: Path,
    now: float | None = None,
) -> RepoMap | None:
    budget = map_budget(manager.facts.max_input_tokens, settings.ACDC_MAP_TOKENS)
    recent = [*_texts(manager.recent_history(RECENT_MESSAGES)), user_text]
    use_stored_symbols(maps)
    root = Path(root)
    if not maps.wait_warm(root, MAP_WAIT_SECONDS):
        log.info("the map of %s is still being read: this request goes without it", root)
        manager.update_context_texts(repo_map="")
        manager.map_focus = ""
        return None
    try:
        built = maps.build(
            root,
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
