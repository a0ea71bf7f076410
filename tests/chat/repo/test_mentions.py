"""@-mentions: the symbols the completion offers, and the check a sent mention goes through."""

from __future__ import annotations

import pytest
from django.test import override_settings

from chat.repo import sessionsets
from chat.repo.mentions import MAX_MENTIONS, Mention, MentionRefused, checked, symbol_index
from chat.repo.repomap.builder import RepoMaps
from history import services

pytestmark = pytest.mark.django_db

ODD = "docs/notes: café\nsecond line.md"


@pytest.fixture
def repo_files():
    return {
        "src/utils.py": (
            "def slugify(text):\n"
            "    return text\n\n\n"
            "class Util:\n"
            "    def run(self):\n"
            "        def deep():\n"
            "            pass\n"
        ),
        "secrets.py": "def api_key() -> str:\n    return 'k'\n",
        ".env": "TOKEN=x\n",
        ODD: "# Notes\n",
        "README.md": "# Readme\n",
    }


@pytest.fixture
def repo_is_git():
    return True


@pytest.fixture
def session(root):
    return services.session_create(repository=str(root), model="acdc/fake")


def test_the_symbols_are_the_maps_definitions_of_files_inside_the_boundary(root):
    rows = symbol_index(root, RepoMaps())["symbols"]
    assert ["slugify", "function", "src/utils.py", 1] in rows
    assert ["Util", "class", "src/utils.py", 5] in rows
    assert ["run", "function", "src/utils.py", 6] in rows  # a method: one level down
    assert not [r for r in rows if r[0] == "deep"]  # two levels down: not offered
    assert not [r for r in rows if r[2] in ("secrets.py", ".env")]  # never a secret's names


def test_no_symbols_are_offered_while_the_map_is_still_warming(root):
    maps = RepoMaps()
    maps._warming.add(str(root.resolve()))
    assert symbol_index(root, maps) == {"symbols": [], "cut": False, "warming": True}


def test_a_file_and_a_symbol_are_kept_in_the_order_typed(session, repo):
    mentions = (Mention("src/utils.py", "slugify", 1), Mention("README.md"), Mention("README.md"))
    assert checked(mentions, session, repo, maps=RepoMaps()) == [
        {"kind": "symbol", "path": "src/utils.py", "symbol": "slugify", "line": 1},
        {"kind": "file", "path": "README.md", "symbol": "", "line": 0},
    ]


def test_an_odd_path_is_kept_as_it_is(session, repo):
    assert checked((Mention(ODD),), session, repo, maps=RepoMaps())[0]["path"] == ODD


@pytest.mark.parametrize(
    ("path", "says"),
    [
        (".env", "looks like a secret"),
        ("secrets.py", "looks like a secret"),
        (".git/config", "The mention @.git/config cannot be sent"),
        ("../outside.py", "cannot be sent"),
        ("src/gone.py", "names no file of the repository"),
        ("src", "names no file of the repository"),
    ],
)
def test_what_the_boundary_refuses_or_the_repository_lacks_is_refused(session, repo, path, says):
    with pytest.raises(MentionRefused, match=says):
        checked((Mention(path),), session, repo, maps=RepoMaps())


def test_a_secret_the_person_confirmed_in_the_session_may_be_mentioned(session, repo):
    sessionsets.set_active_files(session, [".env"], repo=repo, confirmed={".env"})
    assert checked((Mention(".env"),), session, repo, maps=RepoMaps())[0]["path"] == ".env"


def test_too_many_mentions_are_refused(session, repo):
    many = tuple(Mention("README.md", f"s{n}", n) for n in range(MAX_MENTIONS + 1))
    with pytest.raises(MentionRefused, match=f"At most {MAX_MENTIONS} mentions"):
        checked(many, session, repo, maps=RepoMaps())


def test_the_endpoint_answers_the_symbols_of_a_session_and_404_without_one(client, root, session):
    with override_settings(ACDC_REPO=root):
        data = client.get(f"/s/{session.id}/symbols.json").json()
        assert ["slugify", "function", "src/utils.py", 1] in data["symbols"]
        assert client.get("/s/sess_nope/symbols.json").status_code == 404
        assert client.post(f"/s/{session.id}/symbols.json").status_code == 405


def test_a_symbols_body_enters_the_context_as_a_tool_output_the_person_asked_for(session, repo):
    stored = checked(
        (Mention("src/utils.py", "run", 6, body=True),), session, repo, maps=RepoMaps()
    )
    assert stored == [{"kind": "body", "path": "src/utils.py", "symbol": "run", "line": 6}]
    [entry] = [e for e in sessionsets.entries(session, repo) if e.type == "toolcall"]
    assert entry.active and not entry.pinned and entry.tool == "mention"
    assert entry.content == (
        "src/utils.py:6-8 (function run, mentioned by the person)\n"
        "    def run(self):\n        def deep():\n            pass"
    )


def test_a_body_is_found_by_name_when_its_file_moved_it_and_refused_when_it_is_gone(
    session, repo, root
):
    (root / "src" / "utils.py").write_text("\n\ndef slugify(text):\n    return text\n")
    stored = checked(
        (Mention("src/utils.py", "slugify", 1, body=True),), session, repo, maps=RepoMaps()
    )
    assert stored[0]["line"] == 3
    with pytest.raises(MentionRefused, match="no longer defines it"):
        checked((Mention("src/utils.py", "Util", 5, body=True),), session, repo, maps=RepoMaps())


def test_a_refused_message_records_no_body(session, repo):
    asked = (Mention("src/utils.py", "slugify", 1, body=True), Mention("src/gone.py"))
    with pytest.raises(MentionRefused):
        checked(asked, session, repo, maps=RepoMaps())
    assert not [e for e in sessionsets.entries(session, repo) if e.type == "toolcall"]


def test_a_bodys_credentials_are_redacted_like_any_tool_output(session, repo, root):
    key = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    (root / "src" / "keys.py").write_text(f"def token():\n    return '{key}'\n")
    checked((Mention("src/keys.py", "token", 1, body=True),), session, repo, maps=RepoMaps())
    [entry] = [e for e in sessionsets.entries(session, repo) if e.type == "toolcall"]
    assert key not in entry.content and "redacted" in entry.content
