"""Export formatters: Markdown for reading, JSON Lines in AC-DC's history.jsonl schema."""

from __future__ import annotations

import base64
import hashlib
import io
import json

import pytest
from PIL import Image as PILImage

from history import selectors, services
from history.images import DecodeGate, image_store, message_attach_images
from history.interchange.export import image_ref, session_to_jsonl, session_to_markdown
from tests.cli_inprocess import cli_fixture  # noqa: F401 (the `cli` fixture)

pytestmark = pytest.mark.django_db


def _png(size: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", size, (200, 40, 40)).save(out, format="PNG")
    return out.getvalue()


PNG_BYTES = _png((3, 2))


def _session():
    session = services.session_create(repository="/repo", title="Parser talk")
    services.message_append(session=session, role="user", content="What is *this*?")
    services.message_append(session=session, role="assistant", content="A parser.")
    return selectors.get_session(session_id=session.id)


def test_markdown_has_the_title_and_each_message_under_its_speaker():
    detail = _session()
    text = session_to_markdown(detail.session, detail.messages)
    assert text.startswith("# Parser talk\n")
    assert "## You · " in text and "## acdc · " in text
    assert "What is *this*?" in text and text.endswith("A parser.\n")


def test_jsonl_lines_follow_the_history_schema():
    detail = _session()
    first = detail.messages[0]
    refs = {first.id: [image_ref("c" * 64, "image/jpeg")]}
    lines = session_to_jsonl(detail.session, detail.messages, refs).splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["role"] for r in records] == ["user", "assistant"]
    assert set(records[0]) == {
        "id",
        "session_id",
        "timestamp",
        "role",
        "content",
        "files",
        "files_modified",
        "edit_results",
        "image_refs",
    }
    assert records[0]["id"] == first.id and records[0]["session_id"] == detail.session.id
    assert records[0]["timestamp"].endswith("Z")
    assert records[0]["image_refs"] == ["c" * 64 + ".jpg"] and records[1]["image_refs"] == []


def _mentioned():
    session = services.session_create(repository="/repo", title="Mentions")
    mentions = [
        {"kind": "file", "path": "docs/a `b`\nc.md", "symbol": "", "line": 0},
        {"kind": "symbol", "path": "src/utils.py", "symbol": "slugify", "line": 1},
    ]
    message = services.message_append(session=session, role="user", content="See these")
    message.mentions = mentions
    message.save(update_fields=["mentions"])
    services.message_append(session=session, role="assistant", content="Seen.")
    return selectors.get_session(session_id=session.id), mentions


def test_markdown_names_a_messages_mentions_as_code_whatever_the_path_holds():
    detail, _ = _mentioned()
    text = session_to_markdown(detail.session, detail.messages)
    assert (
        "See these\n\nMentioned: ``@docs/a `b` c.md``, `@slugify` (`src/utils.py:1`, outline)\n"
        in text
    )


def test_jsonl_carries_the_mentions_of_a_message_that_has_them():
    detail, mentions = _mentioned()
    records = [
        json.loads(line) for line in session_to_jsonl(detail.session, detail.messages).splitlines()
    ]
    assert records[0]["mentions"] == mentions
    assert "mentions" not in records[1]  # the schema's keys only, when there are none


REPLY = (
    "## Plan\n\nTwo steps.\n\n```md\n## kept as code\n```\n\nWhy\n===\n\n###### deepest\n"
    "    ## indented code\n"
)


def test_a_messages_own_headings_nest_below_its_speakers_and_code_is_untouched():
    session = services.session_create(repository="/repo", title="Headings")
    services.message_append(session=session, role="user", content="# Asked\nplease")
    services.message_append(session=session, role="assistant", content=REPLY)
    detail = selectors.get_session(session_id=session.id)
    text = session_to_markdown(detail.session, detail.messages)
    lines = text.splitlines()
    assert [line.split(" ·")[0] for line in lines if line.startswith("#")] == [
        "# Headings",  # the title, then one `##` per message
        "## You",
        "### Asked",
        "## acdc",
        "#### Plan",
        "## kept as code",  # in its fence, as it was
        "### Why",
        "###### deepest",
    ]
    assert "```md\n## kept as code\n```" in text and "\n    ## indented code" in text


def test_images_are_named_and_inline_in_markdown_and_in_image_refs_from_the_cli(cli, tmp_path):
    data = PNG_BYTES
    session = services.session_create(repository="/repo", title="Screens")
    asked = services.message_append(session=session, role="user", content="What is wrong?")
    message_attach_images(asked, [image_store(data, decodes=DecodeGate())])
    services.message_append(session=session, role="assistant", content="The margin.")
    name = image_ref(hashlib.sha256(data).hexdigest(), "image/png")

    markdown = cli("export", session.id)
    assert markdown.returncode == 0 and markdown.stderr == "", markdown.stderr
    inline = f"![Image 1: {name} (3×2)](data:image/png;base64,{base64.b64encode(data).decode()})"
    assert f"What is wrong?\n\n{inline}\n" in markdown.stdout

    bare = cli("export", session.id, "--format", "jsonl")
    assert "1 image(s) named in image_refs are not written: add --images DIR" in bare.stderr
    folder = tmp_path / "images"
    lines = cli("export", session.id, "--format", "jsonl", "--images", str(folder))
    assert f"1 image(s) written to {folder}" in lines.stderr
    records = [json.loads(line) for line in lines.stdout.splitlines()]
    assert [r["image_refs"] for r in records] == [[name], []]
    assert (folder / name).read_bytes() == data
