"""Declared commands: how an argv reads (a shell or inline code says so, through the
wrappers that start it; a character a reader cannot see is an escape), and what a
repository's files suggest (offered only: the function reads, it never adds)."""

from __future__ import annotations

import json

import pytest

from chat.repo.commands import declaring
from chat.repo.commands.suggestions import suggest


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["pytest", "-q"], "pytest -q"),
        (["sh", "-c", "npm test && curl x"], "sh -c 'npm test && curl x'  [a shell]"),
        (["/bin/bash", "-lc", "make"], "/bin/bash -lc make  [a shell]"),
        (["python3", "-c", "print(1)"], "python3 -c 'print(1)'  [code given to python3]"),
        (["python3.12", "-m", "pytest"], "python3.12 -m pytest"),
        (["env", "A=1", "node", "-e", "x"], "env A=1 node -e x  [code given to node]"),
    ],
)
def test_an_argv_reads_as_what_it_runs(argv, shown):
    assert declaring.shown(argv) == shown


@pytest.mark.parametrize(
    ("argv", "kind"),
    [
        (["python3", "-Ic", "import os"], "code given to python3"),
        (["node", "-p", "process.env"], "code given to node"),
        (["timeout", "-k", "5", "30", "sh", "-c", "x"], "a shell"),
        (["env", "-S", "python3 -c x"], "a command line split by env -S"),
        (["find", ".", "-exec", "sh", "-c", "x", "{}", ";"], "a shell"),
        (["git", "-c", "core.pager=sh -c x", "log"], "code given to git -c core.pager"),
        (["perl", "-ne", "print"], "code given to perl"),
        (["nice", "-n", "5", "bash", "-c", "x"], "a shell"),
        (["xargs", "-a", "list", "sh", "-c", "x"], "a shell"),
        (
            ["env", "-i", "-u", "HOME", "A=1", "python3.12", "-Xdev", "-c", "x"],
            "code given to python3.12",
        ),
        (["python3", "-m", "pytest", "-c", "pytest.ini"], ""),  # pytest's -c: a config file
        (["env", "-u", "HOME", "pytest"], ""),  # -u takes HOME: pytest is the program
        (["git", "-c", "color.ui=always", "status"], ""),
    ],
)
def test_wrappers_are_looked_through_and_inline_code_is_labelled(argv, kind):
    assert declaring.code_kind(argv) == kind
    assert declaring.shown(argv).endswith(f"  [{kind}]") is bool(kind)


def test_what_a_reader_cannot_see_is_shown_as_an_escape_and_a_line_break_as_one_mark():
    """`\u202eyp.tset_clac` displays as `calc_test.py` when drawn raw."""
    argv = ["python3", "\u202eyp.tset_clac", "a\nb", "zero\u200bwidth\u00a0"]
    assert declaring.shown(argv) == "python3 '\\u202eyp.tset_clac' 'a⏎b' 'zero\\u200bwidth\\xa0'"


@pytest.mark.django_db
def test_declarations_belong_to_their_repository():
    declaring.add("/repo/a", "test", ["pytest"])
    declaring.add("/repo/b", "test", ["cargo", "test"], timeout_seconds=600, network=True)
    assert [d.argv for d in declaring.declared("/repo/a")] == [("pytest",)]
    found = declaring.find("/repo/b", "test")
    assert (found.timeout_seconds, found.network) == (600, True)
    assert declaring.find("/repo/a", "lint") is None
    assert declaring.known("/repo/c").startswith("no commands are declared")


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"pyproject.toml": "[tool.pytest.ini_options]\n"}, [("test", "python3 -m pytest -q")]),
        ({"setup.cfg": "[tool:pytest]\naddopts = -q\n"}, [("test", "python3 -m pytest -q")]),
        ({"pytest.ini": "[pytest]\n"}, [("test", "python3 -m pytest -q")]),
        ({"tests/test_a.py": ""}, [("test", "python3 -m pytest -q")]),
        (
            {"pytest.ini": "", ".venv/bin/python": ""},
            [("test", ".venv/bin/python -m pytest -q")],
        ),
        (
            {"package.json": json.dumps({"scripts": {"test": "jest", "lint": "x", "ship": "y"}})},
            [("test", "npm run test"), ("lint", "npm run lint")],
        ),
        (
            {"package.json": json.dumps({"scripts": {"test": "vitest"}}), "yarn.lock": ""},
            [("test", "yarn run test")],
        ),
        (
            {"Makefile": ".PHONY: test\ntest: build\n\tgo test\nclean:\n\trm -rf x\nX := 1\n"},
            [("test", "make test")],
        ),
        ({"Cargo.toml": "[package]\n"}, [("test", "cargo test")]),
        ({"go.mod": "module x\n"}, [("test", "go test ./...")]),
        ({"package.json": "{not json", "pyproject.toml": "[broken"}, []),
        ({"README.md": "# nothing to run\n"}, []),
    ],
)
def test_a_repository_suggests_what_its_files_name(tmp_path, files, expected):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    found = [(s.name, declaring.shown(s.argv)) for s in suggest(tmp_path)]
    assert found == expected


def test_a_suggestion_already_declared_is_not_offered_again(tmp_path):
    (tmp_path / "go.mod").write_text("module x\n")
    assert suggest(tmp_path, declared=(("go", "test", "./..."),)) == []
