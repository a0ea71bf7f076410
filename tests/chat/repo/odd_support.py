"""Odd file names shared by the sweeps that take them through acdc (read tools and map,
edit tools and Commit, the Files panel), and a byte-exact picture of a work tree.

`ODD` pairs each kind of odd name with a secret-shaped twin of the same oddness. `MORE_ODD`
adds names that only some surfaces can hold as files: a 300-character path, names that
read as git pathspec magic or as a git option. `TOO_LONG` is one path segment longer than
any file system takes (255 bytes), so it can only ever be refused.
"""

from __future__ import annotations

import os
from pathlib import Path

ODD = {  # kind: (an ordinary file, a secret-shaped file with the same oddness)
    "colon": ("a:b/mod.py", "a:b/.env"),
    "non-ASCII": ("données/mod.py", "données/.env"),
    "newline": ("new\nline.py", "new\nline/.env"),
    "leading dash": ("-rf.py", "-rf/.env"),
    "spaces": ("with space/my mod.py", "with space/.env"),
    "edge spaces": (" edge .py", " edge /.env"),
}
LONG_FOLDER = "l" * 150
MORE_ODD = {
    "long path": (f"{LONG_FOLDER}/{'m' * 146}.py", f"{LONG_FOLDER}/.env"),  # 300 characters
    "pathspec magic": (":(glob)*.py", ":(glob)*/.env"),
    "git option": ("--output=x.py", "--output=x/.env"),
}
ALL_ODD = {**ODD, **MORE_ODD}
TOO_LONG = "s" * 300 + ".py"
SECRET = "SECRET-VALUE"


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under `root`, git's own folder aside."""
    found: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (folder == str(root) and d == ".git")]
        here = Path(folder).relative_to(root).as_posix()
        prefix = "" if here == "." else here + "/"
        found.update({prefix + d + "/": None for d in dirs})
        found.update({prefix + f: (Path(folder) / f).read_bytes() for f in files})
    return found
