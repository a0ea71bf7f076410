"""Symbols with tree-sitter, one query file per language, on a repository in ten languages."""

from __future__ import annotations

import pytest

from chat.repo.repomap.graph import GraphIndex
from chat.repo.repomap.symbols import LANGUAGES, QUERIES, language_of, parse, query_source
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

    graph = GraphIndex().update(symbols)

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
    # ecmascript.scm holds what JavaScript and TypeScript share; both include it.
    assert {p.stem for p in QUERIES.glob("*.scm")} == names | {"ecmascript"}


def test_javascript_and_typescript_share_the_included_patterns():
    source = "function* ids(start) {\n  yield start;\n}\nconst toName = (id) => `n${id}`;\n"
    for path in ("src/gen.js", "src/gen.ts"):
        found = {d.name: d.kind for d in parse(path, source).definitions}
        assert found == {"ids": "function", "toName": "function"}, path
    assert "; include:" not in query_source("typescript")
    assert "(interface_declaration" in query_source("typescript")
    assert "(interface_declaration" not in query_source("javascript")


def test_broken_source_still_yields_what_parses():
    found = parse("broken.py", "def good(x):\n    return x\n\ndef bad(:\n")

    assert "good" in [d.name for d in found.definitions]
