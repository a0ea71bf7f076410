"""Warm counting as a new process sees it: a process of its own, the page cache emptied.

`python -m bench.repo.probe` sets Django up from the environment (ACDC_REPO,
ACDC_DATA_DIR: the benchmark's repository and its counts table), lists the repository and
counts it with a new `TokenCounts`, and prints the timings as JSON. `fresh_process_count`
runs it, first asking the kernel to drop the repository's files from the page cache
(`posix_fadvise(DONTNEED)`, which needs no privileges but which the kernel may decline for
some pages) when `cold` is set; it says which it did. It migrates the database first,
which is a no-op on the benchmark's own (and untimed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import CHECKOUT


def evict(repo: Path, paths: list[str]) -> bool:
    """Ask the kernel to drop `paths` from the page cache; False where it cannot be asked."""
    if not hasattr(os, "posix_fadvise"):
        return False
    for path in paths:
        try:
            fd = os.open(repo / path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        except OSError:
            return False
        finally:
            os.close(fd)
    return True


def fresh_process_count(repo: Path, data_dir: Path, paths: list[str], *, cold: bool) -> dict:
    """Timings from a new process; `page_cache` says "evicted" or "warm"."""
    evicted = cold and evict(repo, paths)
    environ = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "acdc.settings",
        "ACDC_REPO": str(repo),
        "ACDC_DATA_DIR": str(data_dir),
    }
    for name in ("DATABASE_URL", "REDIS_URL"):
        environ.pop(name, None)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bench.repo.probe"],
        env=environ,
        cwd=CHECKOUT,
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout)
    result["process_s"] = round(time.perf_counter() - started, 3)
    result["page_cache"] = "evicted" if evicted else "warm"
    return result


def main() -> int:
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)  # nothing to do in the bench
    # Lazy: chat's models load only once Django is set up from the environment.
    from chat.live.served import served
    from chat.repo import git

    repo = Path(os.environ["ACDC_REPO"])
    timings: dict[str, Any] = {}
    started = time.perf_counter()
    paths = git.list_files(repo).paths
    timings["list_s"] = round(time.perf_counter() - started, 3)
    started = time.perf_counter()
    served().counts.count(repo, paths)  # the counts of this fresh process
    timings["count_s"] = round(time.perf_counter() - started, 3)
    json.dump(timings, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
