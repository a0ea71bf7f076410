"""Run inside aider's own virtualenv: aider's SEARCH/REPLACE matcher over the edits corpus.

Reads `{"cases": [{"id", "path", "files": {path: text}, "old", "new"}]}` as JSON on stdin
and writes `{"version", "results": [{"id", "after", "path", "error"}]}` as JSON on stdout.
Each case goes through what aider's `EditBlockCoder.apply_edits` does with one block:
`do_replace` on the named file, then on the other files in the chat when that fails; the
texts are given as aider reads them (universal newlines). Imports nothing of acdc, so it
runs with aider's interpreter; acdc never imports aider.
"""

from __future__ import annotations

import json
import sys

import aider
from aider.coders.editblock_coder import DEFAULT_FENCE, do_replace


def one(case: dict) -> dict:
    path, old, new, files = case["path"], case["old"], case["new"], case["files"]
    target, after = path, None
    try:
        if files.get(path) is not None:
            after = do_replace(path, files[path], old, new, DEFAULT_FENCE)
        if not after and old.strip():  # aider tries the other files in the chat
            for other, text in files.items():
                if other != path:
                    after = do_replace(other, text, old, new, DEFAULT_FENCE)
                    if after:
                        target = other
                        break
    except Exception as exc:  # aider's own failure is a refusal, told as such
        return {"id": case["id"], "after": None, "path": path, "error": repr(exc)}
    return {"id": case["id"], "after": after or None, "path": target, "error": ""}


def main() -> None:
    payload = json.load(sys.stdin)
    results = [one(case) for case in payload["cases"]]
    json.dump({"version": aider.__version__, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
