"""The dependency rule: contextcore imports no Django, Channels or litellm."""

from __future__ import annotations

import ast
from pathlib import Path

import contextcore

FORBIDDEN = ("django", "channels", "litellm", "daphne", "chat", "history", "acdc")


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_contextcore_imports_nothing_from_the_web_stack_or_the_apps():
    offenders = []
    for path in Path(contextcore.__file__).parent.rglob("*.py"):
        for name in _imported_modules(path):
            if name.split(".")[0] in FORBIDDEN:
                offenders.append(f"{path.name}: {name}")
    assert offenders == []


def test_the_scan_sees_a_forbidden_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from django.conf import settings\n    import litellm\n")
    assert {"django.conf", "litellm"} <= _imported_modules(sample)


def test_history_does_not_import_chat():
    root = Path(contextcore.__file__).parent.parent / "history"
    offenders = [
        f"{p.name}: {n}"
        for p in root.rglob("*.py")
        for n in _imported_modules(p)
        if n.split(".")[0] == "chat"
    ]
    assert offenders == []
