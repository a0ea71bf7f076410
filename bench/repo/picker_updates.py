"""Bytes the Files panel's live updates put on the wire, on a repository of a few thousand files.

`python -m bench.repo.picker_updates [FILES]` makes a git repository of FILES files (3,000
by default: 100 folders of 3 subfolders of 10), counts it cold with the real `TokenCounts`
and, for every progress report, measures the message as the server sends it now
(`fileupdates.picker_update`: fragments on the rows' stable ids) and as it did before (the
JSON `picker_message` picker.js applied by drawing the whole tree again); then one
watcher update about one edited file, both ways. For scale, files.json (the list of
paths the page keeps) once; then the answer to a choice (all files ticked at once, one file more) as
fragments of the changed rows (`selection.selection_update`) against the JSON lists it
replaces; and the rows the server draws (the first view, a folder opened, the filter's
list: chat.web.panels.tree), and the model's tool activating one file (JSON sets and the
open tree again against `selection.sets_update`). Prints markdown tables; CPU is this
process's own time, the template engine's start and the listing (once a process) apart.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.django_env import setup_django


def make_repo(root: Path, files: int) -> list[str]:
    paths = []
    for n in range(files):
        path = f"pkg{n // 30:03}/sub{(n // 10) % 3}/mod{n % 10}.py"
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(f"def f{n}(x: int) -> int:\n    return x * {n}\n" * (1 + n % 7))
        paths.append(path)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return sorted(paths)


def main(argv: list[str]) -> int:
    files = int(argv[0]) if argv else 3000
    folder = Path(tempfile.mkdtemp(prefix="acdc-picker-bench-"))
    repo = folder / "repo"
    repo.mkdir()
    make_repo(repo, files)
    setup_django(repo, folder / "data")
    from chat.live.served import served
    from chat.repo import git, picker
    from chat.web.fragments import picker_message
    from chat.web.panels.fileupdates import picker_update

    panel = served().files  # the process's counts, outline counts and listings

    paths = git.list_files(repo).paths
    rows: list[tuple[int, int, int]] = []  # files in the message, bytes before, bytes after
    cpu = {"before": 0.0, "after": 0.0}
    every: dict = {}

    def progress(done: int, total: int, fresh: dict) -> None:
        counts = {p: c.as_json() for p, c in fresh.items()}
        every.update(counts)
        started = time.process_time()
        before = picker_message(counts=counts, progress=[done, total])
        cpu["before"] += time.process_time() - started
        started = time.process_time()
        after = picker_update(panel, repo, paths=paths, counts=counts, progress=[done, total])
        cpu["after"] += time.process_time() - started
        rows.append((len(fresh), len(before.encode()), len(after.encode())))

    started = time.process_time()
    picker_update(panel, repo, paths=paths)  # once a process: template engine, the repo's listing
    warm = time.process_time() - started
    panel.counts.count(repo, paths, progress)
    edited = paths[len(paths) // 2]
    (repo / edited).write_text("def changed():\n    return 1\n")
    counts = {p: c.as_json() for p, c in panel.counts.count(repo, [edited]).items()}
    found = panel.outlines.counts(repo, [edited])
    change = {"changed": [edited], "added": [edited], "counts": counts, "outline_counts": found}
    watch_before = len(picker_message(**change).encode())
    watch_after = len(picker_update(panel, repo, **change).encode())
    tree = picker.tree_payload(repo, panel.counts, [])
    whole = len(json.dumps(tree, separators=(",", ":")).encode())
    drawn = _rows_drawn(panel, repo, paths)

    # A choice: the whole repository ticked at once, then one file more after half of it.
    from chat.web.panels.selection import selection_update

    choices = [
        ("tick all", [], paths),
        ("tick one more", paths[: len(paths) // 2], paths[: len(paths) // 2 + 1]),
    ]
    answers = []
    for name, was, now in choices:
        started = time.process_time()
        json_answer = picker_message(
            active=now, outlines=[], shed=[], budget=200_000, answers="t-1"
        )
        json_cpu = time.process_time() - started
        started = time.process_time()
        fragment = selection_update(
            panel, repo, before=(was, []), after=(now, []), budget=200_000, answers="t-1"
        )
        rows_cpu = time.process_time() - started
        answers.append(
            (name, len(json_answer.encode()), json_cpu, len(fragment.encode()), rows_cpu)
        )

    tool = _tool_news(panel, repo, paths, picker_message)

    load = os.getloadavg()
    print(f"Files panel updates, {len(paths):,} files, load {load[0]:.2f} {load[1]:.2f}\n")
    print("| message | files in it | bytes before (JSON) | bytes after (fragments) |")
    print("|---|---:|---:|---:|")
    for n, (fresh, before, after) in enumerate(rows, 1):
        print(f"| progress {n} | {fresh:,} | {before:,} | {after:,} |")
    fresh = sum(r[0] for r in rows)
    before, after = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"| progress, per file | 1 | {before / fresh:.0f} | {after / fresh:.0f} |")
    print(f"| watcher: one edited file | 1 | {watch_before:,} | {watch_after:,} |")
    print(f"| (files.json once per page: the list of paths) | {len(paths):,} | | {whole:,} |")
    spent = f"before {cpu['before']:.3f} s, after {cpu['after']:.3f} s"
    print(f"\nCPU to render the progress messages: {spent} (after {warm:.3f} s once a process)")
    started = time.process_time()
    picker_update(panel, repo, paths=paths, counts=every, progress=[len(paths), len(paths)])
    again = time.process_time() - started
    shown = f"{len(every):,} counts again (listing known): {again:.3f} s"
    print(f"CPU to render a message of all {shown}")
    print("\n| rows drawn by the server (files/rows/) | bytes | CPU |")
    print("|---|---:|---:|")
    for name, size, spent in drawn:
        print(f"| {name} | {size:,} | {spent:.3f} s |")
    print("\n| answer to a choice | bytes (JSON) | CPU (JSON) | bytes (rows) | CPU (rows) |")
    print("|---|---:|---:|---:|---:|")
    for name, json_bytes, json_cpu, rows_bytes, rows_cpu in answers:
        print(f"| {name} | {json_bytes:,} | {json_cpu:.3f} s | {rows_bytes:,} | {rows_cpu:.3f} s |")
    print("\n| the model's tool activates one file (20 active) | bytes | CPU |")
    print("|---|---:|---:|")
    for name, size, spent in tool:
        print(f"| {name} | {size:,} | {spent:.3f} s |")
    return 0


def _tool_news(panel, repo: Path, paths: list[str], picker_message) -> list[tuple[str, int, float]]:
    """A tool activating one file while 20 are active: before, the JSON sets and the open
    tree fetched again by every tab; now, the rows it touched (`selection.sets_update`)."""
    from chat.session.sets import Selection
    from chat.web.panels import tree
    from chat.web.panels.selection import sets_update

    active = frozenset(paths[:: len(paths) // 20][:19] + [paths[-1]])
    chosen = Selection(active, budget=200_000)
    out = []
    started = time.process_time()
    message = picker_message(active=sorted(active), pinned=[], outlines=[], flash=[paths[-1]])
    rows = tree.TreeRows(panel, repo, chosen)
    again = tree.render_tree(rows, "/rows/", opened=rows.opened())
    spent = time.process_time() - started
    out.append(
        ("before: JSON sets + the open tree again", len(message) + len(again.encode()), spent)
    )
    started = time.process_time()
    fragment = sets_update(panel, repo, [paths[-1]], chosen, turn_id="t1")
    out.append(("now: the rows it touched", len(fragment.encode()), time.process_time() - started))
    return out


def _rows_drawn(panel, repo: Path, paths: list[str]) -> list[tuple[str, int, float]]:
    """The Files panel's rows as the server draws them: the first view (a large repository
    shows its top level), one folder opened, the filter's list of 200 files."""
    from chat.session.sets import Selection
    from chat.web.panels import tree

    folder = paths[0].split("/")[0]
    asks = [
        ("first view (top level, with the total)", {}),
        (f"opening {folder}/ (its 3 subfolders)", {"folder": folder}),
        (f"opening {folder}/sub0/ (10 files)", {"folder": f"{folder}/sub0"}),
        ("the filter's list (200 files)", {"found": paths[:200]}),
    ]
    drawn = []
    for name, ask in asks:
        started = time.process_time()
        rows = tree.TreeRows(panel, repo, Selection(frozenset(paths[:5])))
        html = tree.render_tree(rows, "/s/x/files/rows/", **ask)
        drawn.append((name, len(html.encode()), time.process_time() - started))
    return drawn


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
