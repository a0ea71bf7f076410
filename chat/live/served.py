"""What this process serves, built once and handed down: the one served object.

`Served.build` makes, from settings, every part whose state lives as long as the process:
the runtime a turn is given (model client, facts, token counters), the repository served
(its path, the listings drawn from it, acdc's own writes), the working histories search
falls back on, the repository maps, the Files panel's token and outline counts and the
background passes that make them, the listings the pages were drawn from, the file
watchers, the tabs of this process, the turn host, the keep-warm loops and the panel
follower, the model chooser's listings, the image decode gate and the replies' HTML (the
host's). The chat app builds it in `ChatConfig.ready()` (so the server and every `acdc`
command have one), and entry points fetch it once (`served()`: the consumer, the views,
the CLI's commands, the ASGI lifespan) and hand each part to what needs it; deep code
takes the part as an argument and never looks it up. Tests build their own, for a
temporary repository, with fakes where the edges need them.
Non-goals: what each part does (its own module); settings (read once, here and in each part).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from django.apps import apps
from django.conf import settings

from chat.live.follower import PanelFollower
from chat.live.keepwarm import Warmer
from chat.live.turnhost import LocalTabs, TurnHost
from chat.llm.costmap import ModelListings
from chat.llm.runtime import Runtime
from chat.repo.commands.runner import CommandRuns
from chat.repo.listings import FileListings, FilesPanel
from chat.repo.mcp.client import Connections
from chat.repo.outlines import OutlineCounts
from chat.repo.own_writes import OwnWrites
from chat.repo.passes import Passes
from chat.repo.picker import ENCODING, TokenCounts
from chat.repo.repomap.builder import RepoMaps
from chat.repo.served_repo import ServedRepository
from chat.repo.watcher import WatcherRegistry
from contextcore.tokens import TokenCounter
from history.images import DecodeGate
from history.markup.rendered import RenderedReplies
from history.memory import WorkingHistories


@dataclass(frozen=True)
class Served:
    """Every process-wide part, wired to each other once (see the module docstring)."""

    runtime: Runtime
    maps: RepoMaps
    repository: ServedRepository  # its path, the listings drawn from it, acdc's own writes
    histories: WorkingHistories  # the working histories search falls back on
    passes: Passes
    counts: TokenCounts
    outlines: OutlineCounts
    files: FilesPanel  # the counts, the outline counts and the listings, as the panel reads them
    watchers: WatcherRegistry
    tabs: LocalTabs
    host: TurnHost
    warmer: Warmer
    follower: PanelFollower
    models: ModelListings
    decodes: DecodeGate
    commands: CommandRuns  # the model's commands and the checks: sandbox found once
    replies: RenderedReplies  # each reply's HTML, rendered once for every redraw

    @classmethod
    def build(
        cls,
        runtime: Runtime | None = None,
        maps: RepoMaps | None = None,
        outline_counts: type[OutlineCounts] = OutlineCounts,
    ) -> Served:
        """The parts, from settings; `runtime` and `maps` stand in for the settings' own
        (a test's client, a map with no store), `outline_counts` for the outline counts'
        class (a test's that records what it counts)."""
        runtime = runtime or Runtime.from_settings()
        maps = maps if maps is not None else RepoMaps()
        passes = Passes()
        counter = TokenCounter(ENCODING)
        counts = TokenCounts(passes, counter)
        outlines = outline_counts(maps, counter, passes)
        mcp = Connections(root=_configured_repository, data_dir=Path(settings.ACDC_DATA_DIR))
        repository = ServedRepository(_configured_repository, FileListings(), OwnWrites(), mcp)
        histories = WorkingHistories()
        files = FilesPanel(counts, outlines, repository.listings)
        watchers = WatcherRegistry(maps, repository.own_writes)
        tabs = LocalTabs()
        commands = CommandRuns()
        host = TurnHost(
            tabs, runtime, maps, files, commands, repository=repository, histories=histories
        )
        warmer = Warmer(host, tabs)
        follower = PanelFollower(host, tabs)

        def idle(session_id: str) -> None:
            """A session's work is done: keep its cache warm, bring its panels up to date."""
            warmer.wake(session_id)
            follower.turn_ended(session_id)

        host.on_idle = idle
        watchers.on_instructions = follower.nudge_all
        return cls(
            runtime=runtime,
            maps=maps,
            repository=repository,
            histories=histories,
            passes=passes,
            counts=counts,
            outlines=outlines,
            files=files,
            watchers=watchers,
            tabs=tabs,
            host=host,
            warmer=warmer,
            follower=follower,
            models=ModelListings(),
            decodes=DecodeGate(),
            commands=commands,
            replies=host.replies,
        )

    async def close(self) -> None:
        """Server shutdown: every hosted turn ends as interrupted, every watcher and loop
        stops; returns once each has."""
        await asyncio.gather(
            self.host.close(), self.watchers.close(), self.warmer.close(), self.follower.close()
        )
        if self.repository.mcp is not None:  # after the turns: their calls have ended
            await self.repository.mcp.close()


def _configured_repository() -> Path:
    """The repository the settings name (ACDC_REPO), read when asked: the process's one
    place that reads it below `acdc` (a test's settings may name another for its length)."""
    return Path(settings.ACDC_REPO)


def served() -> Served:
    """The process's served object, as the chat app built it (for entry points only)."""
    return apps.get_app_config("chat").served
