"""Run by aider's own interpreter: aider's repository map for each request on stdin.

Each stdin line is a JSON request (`root`, `files` relative to it, `query`, `budget`,
`encoding_dir`); each stdout line answers it with `{"map": text}` (or `{"error": why}`).
The map is aider's `RepoMap` as a chat with no file added builds it for a message:
personalized by the file names and identifiers the message mentions (mentioned names
found as aider's coder finds them: a path written out, a unique base name with a dot,
an underscore or a dash in it, an identifier of five or more letters that is a file's
stem), at exactly `budget` tokens (no multiplier for an empty chat), refreshed on every
request (the checkout changed under it). Tokens are counted with tiktoken's cl100k_base,
acdc's count. Imports nothing of acdc: it runs outside acdc's venv.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

QUOTES = "\"'`*_"


class _Counter:
    def __init__(self, encoding_dir: str) -> None:
        if encoding_dir:
            os.environ["TIKTOKEN_CACHE_DIR"] = encoding_dir
        import tiktoken

        self.encoding = tiktoken.get_encoding("cl100k_base")

    def token_count(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))


class _Quiet:
    """The little of aider's InputOutput the map uses; its chatter goes to stderr."""

    def read_text(self, path: str, silent: bool = False) -> str | None:
        try:
            return Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def tool_output(self, *args: object, **kwargs: object) -> None:
        print(*args, file=sys.stderr)

    tool_warning = tool_error = tool_output


def mentions(query: str, files: list[str]) -> tuple[set[str], set[str]]:
    """(mentioned relative paths, mentioned identifiers) of `query`."""
    words = {w.rstrip(",.!;:?").strip(QUOTES) for w in query.split()}
    idents = set(re.split(r"\W+", query))
    by_base: dict[str, list[str]] = {}
    by_stem: dict[str, set[str]] = {}
    named = {f for f in files if f in words}
    for rel in files:
        base = os.path.basename(rel)
        if any(c in base for c in "._-"):
            by_base.setdefault(base, []).append(rel)
        stem = Path(rel).stem.lower()
        if len(stem) >= 5:
            by_stem.setdefault(stem, set()).add(rel)
    named |= {rels[0] for base, rels in by_base.items() if len(rels) == 1 and base in words}
    for ident in idents:
        if len(ident) >= 5:
            named |= by_stem.get(ident.lower(), set())
    return named, idents


def main() -> int:
    from aider import __version__
    from aider.repomap import RepoMap

    maps: dict[tuple[str, int], RepoMap] = {}
    counter = None
    for line in sys.stdin:
        request = json.loads(line)
        try:
            counter = counter or _Counter(request.get("encoding_dir", ""))
            root, budget = request["root"], int(request["budget"])
            key = (root, budget)
            if key not in maps:
                maps[key] = RepoMap(
                    map_tokens=budget,
                    root=root,
                    main_model=counter,
                    io=_Quiet(),
                    refresh="always",
                )
            named, idents = mentions(request["query"], request["files"])
            text = maps[key].get_repo_map(
                set(),
                {os.path.join(root, f) for f in request["files"]},
                mentioned_fnames=named,
                mentioned_idents=idents,
            )
            answer = {"map": text or "", "version": __version__}
        except Exception as exc:  # one case's failure is reported, the next goes on
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
