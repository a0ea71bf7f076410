"""Odd file names in the Files panel: the payload its script keeps (`files.json`) and the
rows the server draws, from a git repository and from a plain folder alike.

Each odd name is listed once under its own name, its folders are folders under their own
names, and its secret-shaped twin is listed as locked with the reason, never counted and
never with a byte of its content.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.test import Client

from history import services
from tests import serving
from tests.chat.repo.odd_support import ALL_ODD, SECRET

pytestmark = pytest.mark.django_db
ORDINARY = sorted(ordinary for ordinary, _ in ALL_ODD.values())
SECRETS = sorted(secret for _, secret in ALL_ODD.values())


@pytest.fixture
def repo_files():
    files: dict[str, str | bytes] = {"README.md": "# Odd names\n"}
    for ordinary, secret in ALL_ODD.values():
        files[ordinary] = "def marker():\n    return 'MARKER'\n"
        files[secret] = f"MARKER {SECRET}\n"
    return files


@pytest.fixture(params=[True, False], ids=["git", "folder"])
def repo_is_git(request):
    return request.param


@pytest.fixture
def session(served_root, served):
    """A session of the odd repository whose files' counts are known, as after the panel's
    counting pass."""
    served.counts.count(served_root, [*ORDINARY, *SECRETS, "README.md"])
    return services.session_create(repository=str(served_root), model="acdc/fake")


class Rows(HTMLParser):
    """The file and folder rows of the panel's HTML: path -> (its classes, its name)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.files: list[tuple[str, str]] = []  # (path, classes), in order
        self.folders: list[str] = []
        self.names: dict[str, str] = {}
        self._in: str | None = None
        self._depth = 0
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        found = dict(attrs)
        if "data-row" in found:
            self.files.append((found["data-row"], found.get("class", "")))
            self._in = found["data-row"]
        elif "data-folder-row" in found:
            self.folders.append(found["data-folder-row"])
            self._in = found["data-folder-row"]
        elif tag == "span" and found.get("class") == "name" and self._in is not None:
            self._depth = 1
            self.names[self._in] = ""
        elif self._depth and tag == "span":
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if self._depth and tag == "span":
            self._depth -= 1
            if not self._depth:
                self._in = None

    def handle_data(self, data: str) -> None:
        if self._depth and self._in is not None:
            self.names[self._in] += data

    def paths(self) -> list[str]:
        return [path for path, _ in self.files]

    def locked(self) -> list[str]:
        return [path for path, classes in self.files if "locked" in classes.split()]


def test_the_payload_lists_each_odd_name_once_and_its_twin_as_locked(session, served_root):
    answer = Client().get(f"/s/{session.id}/files.json")
    assert SECRET not in answer.content.decode()
    data = answer.json()
    assert sorted(data["files"]) == sorted([*ORDINARY, *SECRETS, "README.md"])
    assert len(data["files"]) == len(set(data["files"]))
    assert sorted(data["locked"]) == SECRETS
    assert all("secret" in reason for reason in data["locked"].values())
    assert data["refused"] == []  # a locked file is locked, not "unreadable"


def test_the_counts_never_read_a_secret_twin(session, served):
    counts = served.counts.peek(serving.repository().root, [*ORDINARY, *SECRETS])
    assert all(counts[path].tokens for path in ORDINARY)
    assert all(counts[path].tokens is None for path in SECRETS)


def test_the_rows_show_each_odd_name_once_under_its_own_name(session):
    html = Client().get(f"/s/{session.id}/files/rows/").content.decode()
    assert SECRET not in html
    rows = Rows(html)
    assert sorted(rows.paths()) == sorted([*ORDINARY, *SECRETS, "README.md"])
    assert len(rows.paths()) == len(set(rows.paths()))
    assert sorted(rows.locked()) == SECRETS
    for path in rows.paths():
        assert rows.names[path] == path.rsplit("/", 1)[-1]
    folders = {secret.rsplit("/", 1)[0] for secret in SECRETS}
    assert sorted(rows.folders) == sorted(folders)
    assert all(rows.names[folder] == folder + "/" for folder in folders)


def test_the_filters_rows_name_each_odd_file_once(session):
    found = [*ORDINARY, *SECRETS]
    answer = Client().post(
        f"/s/{session.id}/files/rows/", {"found": found, "matched": str(len(found))}
    )
    html = answer.content.decode()
    assert answer.status_code == 200 and SECRET not in html
    rows = Rows(html)
    assert rows.paths() == found and sorted(rows.locked()) == SECRETS


@pytest.mark.parametrize("kind", list(ALL_ODD))
def test_the_panels_pin_takes_the_odd_name_and_asks_before_its_twin(session, kind):
    ordinary, secret = ALL_ODD[kind]
    url = f"/s/{session.id}/files/pin/"
    pinned = Client().post(url, {"path": ordinary, "pinned": "true"})
    assert pinned.json()["pinned"] == [ordinary]
    refused = Client().post(url, {"path": secret, "pinned": "true"})
    assert refused.status_code == 400 and SECRET not in refused.content.decode()
    assert Client().get(f"/s/{session.id}/files.json").json()["pinned"] == [ordinary]


def test_opening_an_odd_folder_draws_exactly_its_files(session):
    for secret in SECRETS:
        folder = secret.rsplit("/", 1)[0]
        inside = sorted(p for p in [*ORDINARY, *SECRETS] if p.startswith(folder + "/"))
        html = Client().get(f"/s/{session.id}/files/rows/", {"folder": folder}).content.decode()
        rows = Rows(html)
        assert rows.paths() == inside and rows.locked() == [secret], folder
        assert SECRET not in html
