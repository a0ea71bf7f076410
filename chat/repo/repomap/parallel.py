"""Parsing many files at once: chunks of files sent to a pool of processes.

tree-sitter holds the GIL while it parses, so threads do not help (measured: two threads
took as long as one); processes do. A cold map of a few thousand files sends chunks of
`Parsing.chunk` files, as bytes, to `os.cpu_count()` worker processes, which decode and parse them
and send back their symbols; a build that needs fewer files (an edit, a few new files)
parses them in the calling thread and never starts a process. Workers are started with
"spawn" (the server runs threads; forking them is unsafe) and stopped when the build ends,
so they hold no memory between builds, and they die with the server: a worker asks the
kernel for SIGKILL when its parent goes (Linux's parent-death signal; elsewhere it checks
its parent between chunks), so a server killed mid-parse leaves no worker, and then no
resource tracker, behind. If the pool cannot start or breaks, the rest is
parsed in the calling thread: slower, never lost. Non-goals: which files, the cache
(chat.repo.repomap.builder), parsing itself (chat.repo.repomap.symbols).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor

from chat.repo.repomap.symbols import NO_SYMBOLS, FileSymbols, parse
from contextcore.files import check_text

log = logging.getLogger(__name__)

Item = tuple[str, bytes]  # (path, its bytes)


def parse_bytes(path: str, raw: bytes, size_cap: int) -> FileSymbols:
    text, _ = check_text(raw, size_cap)
    return parse(path, text) if text is not None else NO_SYMBOLS


def parse_chunk(items: list[Item], size_cap: int, parent: int = 0) -> list[FileSymbols]:
    """In a worker: the symbols of each file of the chunk, in order (none once `parent`,
    the server that sent it, is gone)."""
    _exit_if_orphaned(parent)
    return [parse_bytes(path, raw, size_cap) for path, raw in items]


_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def start_worker(parent: int, nice: int) -> None:
    """A worker's initializer: die with `parent` (the server), run at `nice`. Linux sends
    the signal when the *thread* that started the worker ends; `Parsing` starts and shuts
    down its pool in one thread, which therefore outlives its workers."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _exit_if_orphaned(parent)  # the server may have gone before the signal was asked for
    os.nice(nice)


def _exit_if_orphaned(parent: int) -> None:
    if parent and os.getppid() != parent:
        os._exit(1)


def default_workers() -> int:
    return os.cpu_count() or 1


class Parsing:
    """Collects files to parse; `add` sends each full chunk to the pool (started with the
    first full chunk), `finish` parses what is left and calls `done(path, symbols)` for
    every file, in the order they were added."""

    chunk = 64  # files per task: enough to outweigh sending them, small enough to balance

    def __init__(
        self,
        size_cap: int,
        workers: int,
        done: Callable[[str, FileSymbols], None],
        nice: int = 0,
    ):
        self.size_cap = size_cap
        self.nice = nice  # added to the workers' niceness: a warm-up yields to the page
        self.workers = workers
        self.done = done
        self._chunk: list[Item] = []
        self._sent: list[tuple[list[Item], Future]] = []
        self._pool: ProcessPoolExecutor | None = None
        self._broken = workers <= 1
        self.pooled = 0  # files parsed in worker processes

    def add(self, path: str, raw: bytes) -> None:
        self._chunk.append((path, raw))
        if len(self._chunk) >= self.chunk and not self._broken:
            self._send(self._chunk)
            self._chunk = []

    def _send(self, chunk: list[Item]) -> None:
        try:
            if self._pool is None:
                context = multiprocessing.get_context("spawn")
                self._pool = ProcessPoolExecutor(
                    self.workers,
                    mp_context=context,
                    initializer=start_worker,
                    initargs=(os.getpid(), self.nice),
                )
            self._sent.append(
                (chunk, self._pool.submit(parse_chunk, chunk, self.size_cap, os.getpid()))
            )
        except Exception as exc:  # no processes here (limits, a sandbox): parse in this thread
            if isinstance(exc, RuntimeError) and "shutdown" in str(exc):
                # The process is ending (SIGTERM, Ctrl-C) while a build runs: nothing to
                # report; the build's thread ends with the process.
                log.debug("the map's parsing pool is shut down: %s", exc)
            else:
                log.exception("the map's parsing pool could not start; parsing in one thread")
            self._broken = True
            self._sent.append((chunk, _inline(chunk, self.size_cap)))

    def finish(self) -> int:
        """Waits for every chunk; the number of files parsed."""
        if self._chunk and self._sent and not self._broken:
            self._send(self._chunk)
        else:
            self._sent.append((self._chunk, _inline(self._chunk, self.size_cap)))
        self._chunk = []
        parsed = 0
        try:
            for chunk, future in self._sent:
                parsed += self._collect(chunk, future)
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None
            self._sent = []
        return parsed

    def _collect(self, chunk: list[Item], future: Future) -> int:
        try:
            results = future.result()
            self.pooled += len(chunk) if self._pool is not None else 0
        except Exception:  # a worker died: this chunk again, here
            log.exception("a parsing worker failed; parsing its files in one thread")
            results = [parse_bytes(path, raw, self.size_cap) for path, raw in chunk]
        for (path, _), found in zip(chunk, results, strict=True):
            self.done(path, found)
        return len(chunk)


def _inline(chunk: Iterable[Item], size_cap: int) -> Future:
    future: Future = Future()
    future.set_result([parse_bytes(path, raw, size_cap) for path, raw in chunk])
    return future
