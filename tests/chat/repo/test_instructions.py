"""Which project instructions a session sends, and what the repository boundary keeps back."""

from __future__ import annotations

import os

import pytest

from chat.repo import instructions
from contextcore.tokens import TokenCounter

COUNT = TokenCounter("cl100k_base").count_text


@pytest.fixture
def repo_files() -> dict[str, str | bytes]:
    return {
        "CLAUDE.md": "Claude: be brief.\n",
        "AGENTS.md": "Agents: use tabs.\n",
        "CONVENTIONS.md": "Conventions: snake_case.\n",
        ".github/copilot-instructions.md": "Copilot: no print.\n",
        "src/app.py": "print('hi')\n",
    }


def load(root, **options):
    return instructions.load(root, count=COUNT, **options)


def names(found) -> list[str]:
    return [f.name for f in found.files]


def test_the_first_that_exists_is_sent_by_default(root, settings):
    settings.ACDC_INSTRUCTIONS = "first"

    found = load(root)

    assert names(found) == ["AGENTS.md"]
    assert found.files[0].text == "Agents: use tabs.\n"


def test_all_are_sent_in_their_order_when_set(root):
    found = load(root, mode="all")

    assert names(found) == [
        "AGENTS.md",
        "CLAUDE.md",
        ".github/copilot-instructions.md",
        "CONVENTIONS.md",
    ]


def test_none_are_sent_or_named_when_set_off(root):
    assert load(root, mode="off") == instructions.Instructions()


def test_switched_off_for_the_session_they_are_named_but_not_sent(root):
    found = load(root, mode="first", enabled=False)

    assert found.files == ()
    assert found.switched_off == ("AGENTS.md",)


def test_a_file_git_ignores_is_kept_back_and_the_next_one_goes(root):
    (root / ".gitignore").write_text("AGENTS.md\n")

    found = load(root, mode="first")

    assert names(found) == ["CLAUDE.md"]
    assert found.refused == (("AGENTS.md", "ignored by git (.gitignore)"),)


def test_a_secret_shaped_file_is_kept_back(root):
    (root / ".acdcignore").write_text("CLAUDE.md\n")

    found = load(root, mode="all")

    assert "CLAUDE.md" not in names(found)
    assert ("CLAUDE.md", "this file looks like a secret (a credential or private key)") in (
        found.refused
    )


def test_a_symlink_out_of_the_repository_is_kept_back(root, tmp_path):
    outside = tmp_path / "elsewhere.md"
    outside.write_text("Secret plans.\n")
    (root / "AGENTS.md").unlink()
    os.symlink(outside, root / "AGENTS.md")

    found = load(root, mode="all")

    assert "AGENTS.md" not in names(found)
    assert ("AGENTS.md", "resolves outside the repository") in found.refused


def test_binary_and_oversized_files_are_kept_back_with_their_reason(root):
    (root / "AGENTS.md").write_bytes(b"\x00\x01binary")
    (root / "CLAUDE.md").write_bytes(b"x" * 1_000_001)

    found = load(root, mode="first")

    assert names(found) == [".github/copilot-instructions.md"]
    assert dict(found.refused) == {
        "AGENTS.md": "binary file (contains NUL bytes)",
        "CLAUDE.md": "too large (1,000,001 bytes; the limit is 1,000,000)",
    }


def test_a_long_file_is_capped_with_a_note(root):
    (root / "AGENTS.md").write_text("".join(f"Rule {i}: be careful.\n" for i in range(3000)))

    found = load(root, mode="first", max_tokens=200)

    sent = found.files[0]
    assert sent.capped and COUNT(sent.text) < 260
    assert "[acdc: AGENTS.md was cut here" in sent.text


def test_a_folder_of_that_name_is_not_sent(root):
    (root / "AGENTS.md").unlink()
    (root / "AGENTS.md").mkdir()

    found = load(root, mode="first")

    assert names(found) == ["CLAUDE.md"]
    assert ("AGENTS.md", "not a regular file") in found.refused
