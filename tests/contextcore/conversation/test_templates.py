"""Context templates: resolved repo-first then built-in, checked, listed and rendered."""

from __future__ import annotations

import hashlib
import os

import pytest

from contextcore.conversation.templates import (
    BUILTIN_DIR,
    TemplateError,
    list_templates,
    render_template,
    resolve_template,
)


def write_template(repo, name: str, text: str | bytes) -> None:
    folder = repo / ".acdc" / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    data = text if isinstance(text, bytes) else text.encode()
    (folder / f"{name}.md").write_bytes(data)


def test_the_builtin_default_template_resolves_with_its_source_and_hash():
    template = resolve_template("default", None)
    path = BUILTIN_DIR / "default.md"
    assert template.source == "builtin" and template.path == path
    assert template.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert template.text == path.read_text() and template.contract is None
    assert "{recent_turns}" in template.text and "{latest_input}" in template.text


def test_the_builtin_coding_template_has_a_json_contract():
    contract = resolve_template("coding", None).contract
    assert set(contract) >= {"instructions", "decisions", "files", "open"}


def test_a_repo_template_shadows_the_builtin_of_the_same_name(tmp_path):
    write_template(tmp_path, "default", "Summarize: {recent_turns}")
    template = resolve_template("default", tmp_path)
    assert template.source == "repo"
    assert template.path == tmp_path / ".acdc" / "templates" / "default.md"
    assert template.text == "Summarize: {recent_turns}"
    assert template.sha256 == hashlib.sha256(b"Summarize: {recent_turns}").hexdigest()
    assert resolve_template("coding", tmp_path).source == "builtin"


def test_a_repo_only_template_resolves_and_an_unknown_one_is_a_clear_error(tmp_path):
    write_template(tmp_path, "review", "Keep the review findings.")
    assert resolve_template("review", tmp_path).source == "repo"
    with pytest.raises(TemplateError, match="Unknown template 'nothing'.*.acdc/templates"):
        resolve_template("nothing", tmp_path)
    with pytest.raises(TemplateError, match="Unknown template 'review'"):
        resolve_template("review", None)


@pytest.mark.parametrize(
    "name",
    ["../default", "a/b", "..", "", "x" * 65, "de\x00fault", "default.md", "naïve", "a b", None],
)
def test_odd_template_names_are_rejected_before_touching_the_disk(name, tmp_path):
    with pytest.raises(TemplateError, match="Invalid template name"):
        resolve_template(name, tmp_path)


def test_a_name_of_64_allowed_characters_is_accepted(tmp_path):
    name = "a-B_9" * 12 + "abcd"
    write_template(tmp_path, name, "ok")
    assert resolve_template(name, tmp_path).name == name


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        (" \n\t\n", "is empty"),
        ('Summarize.\n```json\n{"summary": \n```\n', "invalid JSON block"),
        ("Summarize.\n```json\n```\n", "invalid JSON block"),
        ("Summarize.\n```json\n[1, 2]\n```\n", "must be an object"),
        ('Summarize.\n```json\n{"summary": "text"}\n', "never closed"),
        (b"\xff\xfe bad bytes", "not UTF-8"),
        ("x" * (64 * 1024 + 1), "larger than"),
    ],
)
def test_a_bad_repo_template_is_a_clear_error_not_a_silent_fallback(tmp_path, text, message):
    write_template(tmp_path, "default", text)
    with pytest.raises(TemplateError, match=message):
        resolve_template("default", tmp_path)


def test_the_first_json_block_is_the_contract_and_other_fences_are_text(tmp_path):
    text = 'Do this.\n```python\nx = {1}\n```\n```json\n{"summary": "string"}\n```\n'
    write_template(tmp_path, "mine", text)
    assert resolve_template("mine", tmp_path).contract == {"summary": "string"}


def test_a_template_linking_outside_the_repository_is_refused(tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("secret")
    repo = tmp_path / "repo"
    (repo / ".acdc" / "templates").mkdir(parents=True)
    os.symlink(outside, repo / ".acdc" / "templates" / "default.md")
    with pytest.raises(TemplateError, match="links outside"):
        resolve_template("default", repo)


def test_a_folder_or_a_dangling_link_in_place_of_a_template_is_an_error(tmp_path):
    folder = tmp_path / ".acdc" / "templates"
    (folder / "default.md").mkdir(parents=True)
    with pytest.raises(TemplateError, match="not a file"):
        resolve_template("default", tmp_path)
    os.symlink(tmp_path / "missing.md", folder / "coding.md")
    with pytest.raises(TemplateError, match="cannot be read"):
        resolve_template("coding", tmp_path)


def test_list_templates_merges_both_folders_with_repo_shadowing_and_errors_shown(tmp_path):
    write_template(tmp_path, "default", "Repo default {recent_turns}")
    write_template(tmp_path, "review", "")
    write_template(tmp_path, "has space", "skipped: not a valid name")
    (tmp_path / ".acdc" / "templates" / "notes.txt").write_text("not markdown")
    listing = {info.name: info for info in list_templates(tmp_path)}
    assert list(listing) == ["coding", "default", "review"]
    assert listing["default"].source == "repo" and listing["default"].error is None
    assert listing["coding"].source == "builtin"
    assert "is empty" in listing["review"].error
    assert [i.name for i in list_templates(None)] == ["coding", "default"]


# -- rendering ------------------------------------------------------------------------


def test_render_fills_known_placeholders_and_leaves_unknown_ones_empty():
    text = "Repo {repository}; turns {recent_turns}; missing [{nope}]"
    rendered = render_template(text, {"repository": "acdc", "recent_turns": "[0] USER: hi"})
    assert rendered == "Repo acdc; turns [0] USER: hi; missing []"


def test_render_never_trips_on_json_or_malformed_braces():
    text = '{"a": {"b": 1}} { } {0} {a.b} {{x}} } { {latest_input'
    assert (
        render_template(text, {"x": "X"}) == '{"a": {"b": 1}} { } {0} {a.b} {X} } { {latest_input'
    )


def test_inserted_values_are_not_rendered_again():
    rendered = render_template("{latest_input}", {"latest_input": "use {repository}"})
    assert rendered == "use {repository}"
