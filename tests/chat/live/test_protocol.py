from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chat.live.protocol import MAX_IMAGES, MAX_PATHS, ClientFrame, FrameError, parse_frame
from chat.repo.listings import TreeAsk
from chat.repo.mentions import MAX_MENTIONS, Mention

LIMIT = 1_000_000


def parse(text=None, data=None):
    return parse_frame(text, data, max_bytes=LIMIT)


def test_it_reads_an_htmx_ws_send_frame():
    raw = {"message": "hi", "action": "send", "HEADERS": {"HX-Request": "true"}}
    frame = parse(json.dumps(raw))
    assert (frame.action, frame.message) == ("send", "hi")


def test_send_is_the_default_action():
    assert parse(json.dumps({"message": "hi"})).action == "send"


@pytest.mark.parametrize(
    ("text", "data", "says"),
    [
        ("{not json", None, "not valid JSON"),
        ("[1, 2]", None, "JSON object"),
        (json.dumps({"action": "explode"}), None, "Unknown action"),
        (json.dumps({"message": ["a"]}), None, "must be text"),
        (None, b"\x00\x01", "Binary frames"),
        (None, None, "Empty frame"),
        ("[" * 100_000, None, "not valid JSON"),
        ('{"message": ' + "9" * 5000 + "}", None, "not valid JSON"),
    ],
)
def test_it_rejects_malformed_frames_with_a_reason(text, data, says):
    with pytest.raises(FrameError, match=says):
        parse(text, data)


def test_it_rejects_frames_over_the_size_limit():
    with pytest.raises(FrameError, match="too large"):
        parse(json.dumps({"message": "x" * (LIMIT + 1)}))


@pytest.mark.parametrize(
    ("message", "focus"),
    [("/compact", ""), ("  /compact  keep the parser notes ", "keep the parser notes")],
)
def test_slash_compact_is_a_compaction_not_a_message(message, focus):
    frame = parse_frame(json.dumps({"action": "send", "message": message}), None, max_bytes=10**6)
    assert (frame.action, frame.focus, frame.message) == ("compact", focus, "")


def test_a_message_that_only_starts_like_the_command_is_a_message():
    frame = parse_frame(json.dumps({"message": "/compactness of code"}), None, max_bytes=10**6)
    assert frame.action == "send" and frame.message == "/compactness of code"


def test_a_compaction_focus_must_be_text_and_is_capped():
    with pytest.raises(FrameError, match="focus must be text"):
        parse_frame(json.dumps({"action": "compact", "focus": 3}), None, max_bytes=10**6)
    frame = parse_frame(
        json.dumps({"action": "compact", "focus": "x" * 900}), None, max_bytes=10**6
    )
    assert len(frame.focus) == 500


@pytest.mark.parametrize(
    ("action", "says"),
    [
        ("", "The action is empty."),
        ([], "The action must be text."),
        (False, "The action must be text."),
        (None, "The action must be text."),
        (3, "The action must be text."),
        ("SEND", "Unknown action 'SEND'."),
    ],
)
def test_an_empty_or_non_text_action_is_refused(action, says):
    with pytest.raises(FrameError) as refused:
        parse(json.dumps({"action": action, "message": "hi"}))
    assert str(refused.value) == says


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"message": "hi \ud800"}, "The message must be valid UTF-8 text."),
        ({"message": "hi", "model": "gpt\udfff"}, "The model name must be valid UTF-8 text."),
        ({"action": "select", "path": ["ok.py", "\udcffbad.py"]}, "File paths must be valid"),
        ({"action": "compact", "focus": "\ud83d"}, "The compaction focus must be valid"),
        ({"action": "select", "confirm": ".env\udc80"}, "Confirmed file paths must be valid"),
        ({"image": ["\ud800" * 64]}, "referenced by their sha256"),
        ({"action": "\ud800"}, r"Unknown action '\\ud800'\."),
    ],
)
def test_a_lone_surrogate_is_refused_with_a_message(raw, says):
    with pytest.raises(FrameError, match=says):
        parse(json.dumps(raw))


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"message": None}, "The message must be text."),
        ({"message": "hi", "model": 4}, "The model name must be text."),
        ({"action": "select", "path": [1]}, "File paths must be text."),
        ({"action": "select", "path": {"a": 1}}, "File paths must be text."),
        ({"image": ["not-a-sha"]}, "referenced by their sha256"),
        ({"image": "F" * 64}, "referenced by their sha256"),
        ({"action": "select", "path": "a.py", "confirm": [".env", 7]}, "Confirmed file paths"),
        ({"action": "select", "confirm": {".env": True}}, "Confirmed file paths must be text."),
        ({"action": "select", "path": [["a.py"]]}, "File paths must be text."),
    ],
)
def test_a_field_of_the_wrong_type_is_refused_with_its_name(raw, says):
    with pytest.raises(FrameError, match=says):
        parse(json.dumps(raw))


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"message": "a\u0000b"}, "The message must not contain a NUL character."),
        ({"message": "hi", "model": "gpt\u0000"}, "The model name must not contain a NUL"),
        ({"action": "select", "path": ["a\u0000.py"]}, "File paths must not contain a NUL"),
        ({"action": "compact", "focus": "\u0000"}, "The compaction focus must not contain"),
    ],
)
def test_a_nul_character_is_refused_before_it_reaches_the_database(raw, says):
    with pytest.raises(FrameError, match=says):
        parse(json.dumps(raw))


def test_a_select_frame_carries_the_paths_the_person_confirmed():
    raw = {"action": "select", "path": ["a.py", ".env"], "confirm": [".env", ".env"]}
    frame = parse(json.dumps(raw))
    assert (frame.paths, frame.confirm) == (("a.py", ".env"), (".env",))
    assert parse(json.dumps({"action": "select", "confirm": ".env"})).confirm == (".env",)
    assert parse(json.dumps({"action": "select", "path": "a.py"})).confirm == ()


def test_fields_htmx_adds_are_ignored():
    raw = {"message": "hi", "HEADERS": {"HX-Trigger": "composer"}, "attach": "x", "n": [1]}
    assert parse(json.dumps(raw)) == ClientFrame(action="send", message="hi")


def test_one_or_many_paths_and_images_are_read_and_repeats_dropped():
    one = parse(json.dumps({"action": "select", "path": "src/a.py"}))
    assert one.paths == ("src/a.py",)
    many = parse(json.dumps({"action": "select", "path": ["b.py", "a.py", "b.py"]}))
    assert many.paths == ("b.py", "a.py")
    shas = ["a" * 64, "b" * 64, "a" * 64]
    assert parse(json.dumps({"message": "look", "image": shas})).images == ("a" * 64, "b" * 64)


def test_too_many_paths_or_images_are_refused():
    with pytest.raises(FrameError, match="Too many files selected at once"):
        parse(json.dumps({"action": "select", "path": [f"f{n}" for n in range(MAX_PATHS + 1)]}))
    with pytest.raises(FrameError, match=f"At most {MAX_IMAGES} images"):
        parse(json.dumps({"image": [f"{n:064x}" for n in range(MAX_IMAGES + 1)]}))
    repeated = parse(json.dumps({"image": ["c" * 64] * (MAX_IMAGES + 1)}))
    assert repeated.images == ("c" * 64,)


def test_the_model_name_is_trimmed_and_the_message_kept_as_typed():
    frame = parse(json.dumps({"message": "  two spaces  ", "model": " acdc/fake "}))
    assert (frame.message, frame.model) == ("  two spaces  ", "acdc/fake")


_ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=20)
_TEXT = _ANY_TEXT | st.sampled_from(
    ["/compact x", " /compact", "\ud800", "ok \udfff", "a" * 64, "nul\0"]
)
_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)
_FIELDS = ("action", "message", "model", "path", "image", "focus", "confirm", "HEADERS")
_ANY_FRAME = st.fixed_dictionaries({}, optional=dict.fromkeys(_FIELDS, _JSONISH))
_TYPED_FRAME = st.fixed_dictionaries(
    {},
    optional={
        "action": st.sampled_from(["send", "stop", "select", "compact"]),
        **dict.fromkeys(("message", "model", "focus"), _TEXT),
        "path": _TEXT | st.lists(_TEXT, max_size=3),
        "confirm": _TEXT | st.lists(_TEXT, max_size=3),
        "image": st.lists(st.sampled_from(["a" * 64, "b" * 64]), max_size=3),
    },
)


@given(st.one_of(st.one_of(_TYPED_FRAME, _ANY_FRAME, _JSONISH).map(json.dumps), _ANY_TEXT))
def test_any_text_is_a_frame_or_a_frame_error(text):
    try:
        frame = parse(text)
    except FrameError as exc:
        assert str(exc).endswith(".")
    else:
        assert isinstance(frame, ClientFrame)
        assert frame.action in ("send", "stop", "select", "compact")
        texts = (frame.message, frame.model, frame.focus, *frame.paths, *frame.confirm)
        for value in (*texts, *frame.images):
            assert "\0" not in value
            value.encode("utf-8")


def test_a_sent_mention_is_read_from_its_chips_json_whatever_its_path_holds():
    odd = json.dumps({"path": "docs/a: b\ncafé.md"})
    symbol = json.dumps({"path": "src/utils.py", "symbol": "slugify", "line": 1})
    body = json.dumps({"path": "src/utils.py", "symbol": "slugify", "line": 1, "body": True})
    frame = parse(json.dumps({"message": "hi", "mention": [odd, symbol, symbol, body]}))
    assert frame.mentions == (
        Mention("docs/a: b\ncafé.md"),
        Mention("src/utils.py", "slugify", 1),
        Mention("src/utils.py", "slugify", 1, body=True),
    )
    assert parse(json.dumps({"message": "hi", "mention": odd})).mentions == frame.mentions[:1]


@pytest.mark.parametrize(
    "mention",
    [
        "src/utils.py",  # not the chip's JSON
        json.dumps({"path": ""}),
        json.dumps({"path": "a.py", "line": -1}),
        json.dumps({"path": "a.py", "line": "3"}),
        json.dumps({"path": "a.py", "what": "else"}),
        json.dumps({"path": "a.py", "body": True}),  # a body needs a symbol
        json.dumps({"path": "a\u0000.py"}),
        json.dumps(["a.py"]),
        7,
    ],
)
def test_a_malformed_mention_is_refused_with_a_reason(mention):
    with pytest.raises(FrameError, match="A mention must name a file"):
        parse(json.dumps({"message": "hi", "mention": mention}))


def test_too_many_mentions_are_refused_before_anything_is_checked():
    many = [json.dumps({"path": f"f{n}.py"}) for n in range(MAX_MENTIONS + 1)]
    with pytest.raises(FrameError, match=f"At most {MAX_MENTIONS} mentions"):
        parse(json.dumps({"message": "hi", "mention": many}))


def test_a_rows_frame_names_the_list_or_the_tree_the_tab_asks_for():
    listed = {"action": "rows", "view": "list", "found": "a.py", "matched": "7", "coming": "1"}
    assert parse(json.dumps(listed)).rows == TreeAsk(("a.py",), 7, True, (), "")
    tree = {"action": "rows", "open": ["src", "lib"], "shown": "00ff00ff00ff00ff"}
    assert parse(json.dumps(tree)).rows == TreeAsk(None, 0, False, ("src", "lib"), "00ff" * 4)
    assert parse(json.dumps({"action": "select"})).rows is None
    with pytest.raises(FrameError, match="The sets shown"):
        parse(json.dumps({"action": "rows", "shown": "<b>"}))
