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
    assert checked(mentions, session.id, repo) == [
        {"kind": "symbol", "path": "src/utils.py", "symbol": "slugify", "line": 1},
        {"kind": "file", "path": "README.md", "symbol": "", "line": 0},
    ]


def test_an_odd_path_is_kept_as_it_is(session, repo):
    assert checked((Mention(ODD),), session.id, repo)[0]["path"] == ODD


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
        checked((Mention(path),), session.id, repo)


def test_a_secret_the_person_confirmed_in_the_session_may_be_mentioned(session, repo):
    sessionsets.set_active_files(session, [".env"], repo=repo, confirmed={".env"})
    assert checked((Mention(".env"),), session.id, repo)[0]["path"] == ".env"


def test_too_many_mentions_are_refused(session, repo):
    many = tuple(Mention("README.md", f"s{n}", n) for n in range(MAX_MENTIONS + 1))
    with pytest.raises(MentionRefused, match=f"At most {MAX_MENTIONS} mentions"):
        checked(many, session.id, repo)


def test_the_endpoint_answers_the_symbols_of_a_session_and_404_without_one(client, root, session):
    with override_settings(ACDC_REPO=root):
        data = client.get(f"/s/{session.id}/symbols.json").json()
        assert ["slugify", "function", "src/utils.py", 1] in data["symbols"]
        assert client.get("/s/sess_nope/symbols.json").status_code == 404
        assert client.post(f"/s/{session.id}/symbols.json").status_code == 405
