"""Symbols with tree-sitter, one query file per language, on a repository in ten languages."""

from __future__ import annotations

import pytest

from chat.repo.repomap.graph import build_graph
from chat.repo.repomap.symbols import LANGUAGES, QUERIES, language_of, parse
from tests.chat.repo.polyglot import DEFINED, FILES, USES


@pytest.mark.parametrize("path", sorted(DEFINED))
def test_it_finds_each_languages_definitions_with_signatures(path):
    found = parse(path, FILES[path])

    assert [(d.kind, d.name, d.depth, d.signature) for d in found.definitions] == DEFINED[path]


@pytest.mark.parametrize("path", sorted(USES))
def test_it_finds_the_identifiers_a_file_uses_from_the_other(path):
    target, names = USES[path]
    references = dict(parse(path, FILES[path]).references)
    defined = {d.name for d in parse(target, FILES[target]).definitions}

    assert names <= set(references)
    assert names <= defined


def test_cross_file_references_become_edges_in_every_language():
    symbols = {path: parse(path, text) for path, text in FILES.items()}

    graph = build_graph(symbols)

    for user, (target, _) in USES.items():
        assert graph.edges[user].get(target, 0) > 0, user


def test_a_files_own_definition_names_are_not_counted_as_its_references():
    found = parse("a.py", "def alone():\n    return 1\n")

    assert [d.name for d in found.definitions] == ["alone"]
    assert "alone" not in dict(found.references)


def test_files_of_other_languages_have_no_symbols():
    assert language_of("docs/notes.txt") == ""
    assert parse("docs/notes.txt", FILES["docs/notes.txt"]).definitions == ()


def test_every_language_has_its_query_file_in_the_package():
    names = {spec[0] for spec in LANGUAGES.values()}

    assert names == {
        "python",
        "javascript",
        "typescript",
        "go",
        "rust",
        "java",
        "c",
        "cpp",
        "ruby",
        "php",
    }
    assert {p.stem for p in QUERIES.glob("*.scm")} == names


def test_broken_source_still_yields_what_parses():
    found = parse("broken.py", "def good(x):\n    return x\n\ndef bad(:\n")

    assert "good" in [d.name for d in found.definitions]
