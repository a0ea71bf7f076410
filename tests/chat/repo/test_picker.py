"""The Files panel's data on a real git repository: tree, badges, counts by content hash."""

from __future__ import annotations

import json
import subprocess

import pytest
from django.conf import settings
from django.test import override_settings

from chat.models import TokenCount
from chat.repo import git as repo_git
from chat.repo import picker, sessionsets
from chat.repo.passes import Passes
from contextcore.tokens import TokenCounter
from history import services
from tests import serving

pytestmark = pytest.mark.django_db


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo_files():
    return {
        "src/app.py": "def greet(name):\n    return name\n",
        "src/old.py": "OLD = 1\n",
        "README.md": "# Readme\n",
        ".gitignore": "build/\n",
    }


@pytest.fixture
def repo_is_git():
    return True


@pytest.fixture
def root(root):
    """Committed once; then an ignored build output and acdc's own folder appear."""
    git(root, "-c", "user.email=a@b", "-c", "user.name=t", "add", ".")
    git(root, "-c", "user.email=a@b", "-c", "user.name=t", "commit", "-qm", "start")
    (root / "build").mkdir()
    (root / "build" / "out.js").write_text("ignored\n")
    (root / ".acdc").mkdir()
    (root / ".acdc" / "acdc.sqlite3").write_text("db")
    return root


def test_the_tree_lists_tracked_and_untracked_files_but_nothing_ignored(root):
    (root / "notes.txt").write_text("new\n")
    assert repo_git.list_files(root).paths == [
        ".gitignore", "README.md", "notes.txt", "src/app.py", "src/old.py",
    ]  # fmt: skip


def test_git_badges_say_modified_staged_untracked_and_deleted(root):
    (root / "src" / "app.py").write_text("changed\n")
    (root / "README.md").write_text("# Staged\n")
    git(root, "add", "README.md")
    (root / "src" / "old.py").unlink()
    (root / "notes.txt").write_text("new\n")
    assert repo_git.status(root) == {
        "src/app.py": "M",
        "README.md": "S",
        "src/old.py": "D",
        "notes.txt": "U",
    }


class RecordingCounter(TokenCounter):
    """The counts' encoder, noting every batch of texts it is asked to encode."""

    def __init__(self) -> None:
        super().__init__(picker.ENCODING)
        self.encoded: list[list[str]] = []

    def count_many(self, texts, *, remember: bool = True) -> list[int]:
        self.encoded.append(list(texts))
        return super().count_many(texts, remember=remember)


def token_counts(counter: TokenCounter | None = None, **options) -> picker.TokenCounts:
    """The counts of a fresh process (as its served object builds them)."""
    return picker.TokenCounts(Passes(), counter or TokenCounter(picker.ENCODING), **options)


def test_counts_are_cached_by_content_hash(root):
    recorded, other = RecordingCounter(), RecordingCounter()
    counts = token_counts(recorded)
    first = counts.count(root, ["src/app.py", "README.md"])
    assert first["src/app.py"].tokens > 0 and first["README.md"].tokens > 0
    assert TokenCount.objects.count() == 2

    # A new process (fresh stat cache) finds the counts by hash: nothing is encoded.
    again = token_counts(other).count(root, ["src/app.py", "README.md"])
    assert again == first and other.encoded == [[]]
    # A copy under another name is the same content: still nothing to encode.
    (root / "copy.py").write_bytes((root / "src" / "app.py").read_bytes())
    assert token_counts().count(root, ["copy.py"])["copy.py"] == first["src/app.py"]
    # An edit is new content: exactly that file is encoded.
    (root / "README.md").write_text("# Readme, now longer than before\n")
    counts.count(root, ["src/app.py", "README.md"])
    assert recorded.encoded[-1] == ["# Readme, now longer than before\n"]


def test_binary_and_oversized_files_come_back_with_the_reason(root):
    (root / "logo.png").write_bytes(b"\x89PNG\x00\x00data")
    (root / "huge.txt").write_text("x" * 2000)
    counts = token_counts(size_cap=1000).count(root, ["logo.png", "huge.txt"])
    assert counts["logo.png"].tokens is None and "binary" in counts["logo.png"].reason
    assert counts["huge.txt"].as_json() == [None, "too large (2,000 bytes; the limit is 1,000)"]


def test_progress_is_reported_until_every_file_is_counted(root):
    seen = []
    token_counts().count(
        root, repo_git.list_files(root).paths, lambda done, total, fresh: seen.append((done, total))
    )
    assert seen[-1] == (4, 4)


def test_the_payload_and_the_pin_endpoint(client, root, served):
    with override_settings(ACDC_REPO=root):
        session = services.session_create(repository=str(root), model="acdc/fake")
        sessionsets.activate(session, "src/app.py", repo=serving.repository())
        (root / "logo.png").write_bytes(b"\x89PNG\x00\x00data")
        served.counts.count(root, ["src/app.py", "logo.png"])
        data = client.get(f"/s/{session.id}/files.json").json()
        assert data["active"] == ["src/app.py"] and data["outlines"] == []
        assert data["refused"] == ["logo.png"] and ".py" in data["outline_suffixes"]
        assert "src/old.py" in data["files"] and "counts" not in data  # the rows carry them

        pinned = client.post(f"/s/{session.id}/files/pin/", {"path": "README.md", "pinned": "true"})
        assert pinned.json()["pinned"] == ["README.md"]
        unpinned = client.post(f"/s/{session.id}/files/pin/", {"path": "README.md"})
        assert unpinned.json()["pinned"] == []
        refused = client.post(f"/s/{session.id}/files/pin/", {"path": "../x", "pinned": "true"})
        assert refused.status_code == 400 and "traversal" in json.loads(refused.content)["error"]


def test_the_session_page_holds_the_picker_shell(client):
    session = services.session_create(repository=str(settings.ACDC_REPO))
    html = client.get(f"/s/{session.id}/").content.decode()
    assert 'aria-label="Files"' in html and 'id="file-filter"' in html
    assert f"/s/{session.id}/files.json" in html


def test_opening_a_session_reconciles_its_files_with_the_disk(client, root):
    with override_settings(ACDC_REPO=root):
        session = services.session_create(repository=str(root), model="acdc/fake")
        sessionsets.activate(session, "src/app.py", repo=serving.repository())
        (root / "src" / "app.py").write_text("def greet():\n    return 'changed meanwhile'\n")
        assert client.get(f"/s/{session.id}/").status_code == 200
        [entry] = sessionsets.entries(session, repo=serving.repository())
        assert "changed meanwhile" in entry.content


def test_an_empty_file_counts_as_zero_tokens(root):
    (root / "src" / "__init__.py").write_text("")
    counts = token_counts().count(root, ["src/__init__.py", "src/app.py"])
    assert counts["src/__init__.py"].tokens == 0 and counts["src/app.py"].tokens > 0
