"""chat.repo.boundary.verdict and screen under every spelling of an internal or secret path."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings

from chat.repo import boundary


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name in (".git/config", ".acdc/acdc.sqlite3", ".acdc/secret_key", ".env", "id_rsa"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    for name in ("server.pem", "id_rsa.pub", "src/app.py", "d/keep.txt", "sub/.git/HEAD"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    for link, target in {"to-env": ".env", "to-git": ".git", "to-db": ".acdc/acdc.sqlite3"}.items():
        (root / link).symlink_to(root / target)
    with override_settings(ACDC_REPO=root, ACDC_DATA_DIR=root / ".acdc"):
        yield root


INTERNAL = [
    ".git/config",
    "./.git/config",
    "d//../.git/config",
    "d/../.git/config",
    ".GIT/config",
    ".git/config/",
    ".git",
    "sub/.git/HEAD",
    "to-git/config",
    ".acdc/acdc.sqlite3",
    "./.acdc/secret_key",
    "d/../.acdc/secret_key",
    ".acdc/",
    "to-db",
]
SECRET = [".env", "./.env", "d//../.env", ".Env", ".env/", "to-env", "id_rsa", "ID_RSA"]
SECRET += ["server.pem", "d/../server.pem", "config/.env.local"]
OK = ["src/app.py", "./src/app.py", "d/keep.txt", "id_rsa.pub", "README.md", "d/"]


@pytest.mark.parametrize("path", INTERNAL)
def test_internal_paths_are_internal_under_any_spelling(tree, path):
    assert boundary.verdict(path, root=settings.ACDC_REPO).kind == "internal"


@pytest.mark.parametrize("path", SECRET)
def test_secret_shaped_files_are_secret_under_any_spelling(tree, path):
    assert boundary.verdict(path, root=settings.ACDC_REPO).kind == "secret"


@pytest.mark.parametrize("path", OK)
def test_ordinary_paths_are_ok(tree, path):
    assert boundary.verdict(path, root=settings.ACDC_REPO).kind == "ok"


def test_an_absolute_path_into_the_repository_is_judged_too(tree):
    assert boundary.verdict(str(tree / ".git" / "config"), root=tree).kind == "internal"
    assert boundary.verdict(str(tree / ".env"), root=settings.ACDC_REPO).kind == "secret"


def test_a_data_folder_outside_the_repository_is_internal_through_a_symlink(tree, tmp_path):
    data = tmp_path / "elsewhere"
    data.mkdir()
    (data / "acdc.sqlite3").write_text("db\n")
    (tree / "to-data").symlink_to(data)
    with override_settings(ACDC_DATA_DIR=data):
        assert boundary.verdict("to-data/acdc.sqlite3", root=settings.ACDC_REPO).kind == "internal"
        assert boundary.verdict(".acdc/acdc.sqlite3", root=settings.ACDC_REPO).kind == "ok"


def test_acdcignore_and_settings_add_secret_patterns(tree):
    (tree / ".acdcignore").write_text("private/\n")
    (tree / "private").mkdir()
    (tree / "private" / "notes.md").write_text("x\n")
    assert boundary.verdict("private/notes.md", root=settings.ACDC_REPO).kind == "secret"
    with override_settings(ACDC_SECRET_PATTERNS=("*.sqlite",)):
        assert boundary.verdict("data/app.sqlite", root=settings.ACDC_REPO).kind == "secret"


def test_screen_drops_internal_paths_and_locks_secrets(tree):
    paths = ["src/app.py", ".env", "to-env", "to-db", "sub/.git/HEAD", "id_rsa.pub", "id_rsa"]
    screened = boundary.screen(paths, root=settings.ACDC_REPO)
    assert screened.kept == ["src/app.py", ".env", "to-env", "id_rsa.pub", "id_rsa"]
    assert set(screened.locked) == {".env", "to-env", "id_rsa"}


PARTS = [
    "src",
    ".env",
    ".ENV.local",
    ".git",
    ".acdc",
    "id_rsa",
    "id_rsa.pub",
    "x.pem",
    "Secrets.yaml",
]
PARTS += ["private", "notes.md", "credentials.json", "a.tfstate", "keep"]


@pytest.mark.parametrize("ignore", ["", "private/\n*.md\n", "*.pem\n!x.pem\n"])
def test_screen_judges_a_listing_as_verdict_judges_each_path(tree, ignore):
    """The listing's fast path (plain paths judged on their text, one regular expression
    for the patterns) gives each path the verdict it gets alone; with a `!` line the spec
    judges by itself."""
    (tree / ".acdcignore").write_text(ignore)
    paths = (
        [f"{a}/{b}" for a in PARTS for b in PARTS]
        + PARTS
        + [f"src/{a}/{b}" for a in PARTS for b in PARTS]
    )
    screened = boundary.screen(paths, root=settings.ACDC_REPO)
    for path in paths:
        found = boundary.verdict(path, root=settings.ACDC_REPO)
        assert (path in screened.kept) == (found.kind != "internal"), path
        assert (path in screened.locked) == (found.kind == "secret"), path
