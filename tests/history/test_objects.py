"""Hashing, identity, mount mappings and filesystem identity (seed 001 §2.4–2.5, §5.3–5.4).

The fixed vectors were computed once and checked by hand: each serialized string below was
piped through `printf '%s' '...' | sha256sum` and gave the digest next to it.
"""

from __future__ import annotations

import math

import pytest

from history import objects
from history.objects import MountMapping

MAIN_TS = objects.filesystem_source("fs1", "/home/u/project/src/main.ts")
TEXT = "héllo\n"
TEXT_SHA = "b95becd154aa095f76c4ca47a5aeb8350d6dfcb838404edfc9dae06628de938d"


def test_stable_stringify_sorts_keys_drops_whitespace_and_keeps_utf8():
    value = {"b": [1, {"z": None, "a": "é"}], "a": True}
    assert objects.stable_stringify(value) == '{"a":true,"b":[1,{"a":"é","z":null}]}'


def test_stable_stringify_refuses_nan():
    with pytest.raises(ValueError):
        objects.stable_stringify({"x": math.nan})


def test_a_sourced_identity_hash_is_sha256_of_type_and_source():
    serialized = objects.stable_stringify({"type": "file", "source": MAIN_TS})
    assert serialized == (
        '{"source":{"filesystemId":"fs1","path":"/home/u/project/src/main.ts",'
        '"type":"filesystem"},"type":"file"}'
    )
    assert (
        objects.identity_hash("file", source=MAIN_TS)
        == "5d8dfd0a86ff0c57256e266500339152cbbaf09c415b833a90ddd9abd7d13f11"
    )


def test_an_unsourced_identity_hash_is_sha256_of_type_and_assigned_id():
    object_id = objects.toolcall_object_id("sess_1_abc", "call_1")
    assert object_id == "toolcall:sess_1_abc:call_1"
    assert (
        objects.identity_hash("toolcall", object_id=object_id)
        == "9ea6aeda7d7c8276b44994ec20fad97f46d4d87a8c06eb7ad874f893bce3b0fa"
    )


def test_an_unsourced_identity_needs_an_id():
    with pytest.raises(ValueError):
        objects.identity_hash("toolcall")


def test_the_same_path_on_another_filesystem_is_another_object():
    elsewhere = objects.filesystem_source("fs2", MAIN_TS["path"])
    assert objects.identity_hash("file", source=elsewhere) != objects.identity_hash(
        "file", source=MAIN_TS
    )


def test_a_read_file_version_has_the_four_hashes_of_the_spec():
    fields = objects.file_fields(MAIN_TS["path"], TEXT)
    assert fields == {"file_type": "ts", "char_count": 6}
    hashes = objects.version_hashes(TEXT.encode(), TEXT, fields)
    assert hashes.file_hash == TEXT_SHA
    assert hashes.content_hash == TEXT_SHA  # identical for text files stored as read
    # sha256 of '{"char_count":6,"file_type":"ts"}'
    assert (
        hashes.metadata_hash == "dc2e47540278643915501388063538ffc3cc4547137f5ce99b6c7dd27d5cb2b4"
    )
    # sha256 of '{"content_hash":"b95b…","file_hash":"b95b…","metadata_hash":"dc2e…"}'
    assert hashes.object_hash == "4ba6d3ba0ef1b2156dd8b22cee41bebca33f78d96988935b809c2a75f8d3394e"


def test_a_discovery_stub_has_null_file_and_content_hashes_but_an_object_hash():
    hashes = objects.version_hashes(None, None, objects.file_fields(MAIN_TS["path"], None))
    assert (hashes.file_hash, hashes.content_hash) == (None, None)
    # sha256 of '{"char_count":0,"file_type":"ts"}'
    assert (
        hashes.metadata_hash == "8a19f7fe3d267661838080bcb741fd4a70d5494397ffd64b8a47cca1c4c06a4b"
    )
    # sha256 of '{"content_hash":null,"file_hash":null,"metadata_hash":"8a19…"}'
    assert hashes.object_hash == "7d8d8e6ed6b81acfff8e62e83572f76c04ad1ee591c648700d092b81f23ea76c"


def test_a_toolcall_version_hashes_its_fields_and_output():
    fields = objects.toolcall_fields(
        tool="grep",
        args={"pattern": "TODO", "path": "src"},
        status="ok",
        chat_ref=objects.chat_ref("sess_1_abc"),
    )
    assert objects.stable_stringify(fields) == (
        '{"args":{"path":"src","pattern":"TODO"},"chat_ref":"chat:sess_1_abc",'
        '"status":"ok","tool":"grep"}'
    )
    hashes = objects.version_hashes(None, "src/a.py:1: TODO\n", fields)
    assert hashes.file_hash is None
    assert hashes.content_hash == "51ecad4dcc7247aa92497e44e0c6921c0217dc5f65ccf464e3af1481ba9da805"
    assert (
        hashes.metadata_hash == "9958823daf48e2cc22108caa164fef0049ae4a029b608d486ed8412c64bad0d8"
    )
    assert hashes.object_hash == "8dd144ad0efe55283668a548ad35cabf570be54901723aa0c23aafa8f2c044bf"


def test_optional_toolcall_fields_are_left_out_unless_given():
    base = {"tool": "ls", "args": {}, "status": "fail", "chat_ref": "chat:s"}
    assert objects.toolcall_fields(**base) == base
    full = objects.toolcall_fields(**base, args_display="ls .", file_refs=("a",))
    assert full["args_display"] == "ls ." and full["file_refs"] == ["a"]


def test_a_toolcall_status_is_ok_or_fail():
    with pytest.raises(ValueError):
        objects.toolcall_fields(tool="ls", args={}, status="maybe", chat_ref="chat:s")


def test_changing_metadata_changes_metadata_and_object_hash_but_not_content_hash():
    one = objects.version_hashes(None, "out", {"tool": "ls", "status": "ok"})
    two = objects.version_hashes(None, "out", {"tool": "ls", "status": "fail"})
    assert one.content_hash == two.content_hash
    assert one.metadata_hash != two.metadata_hash
    assert one.object_hash != two.object_hash


def test_changing_content_changes_content_and_object_hash_but_not_metadata_hash():
    fields = {"file_type": "py", "char_count": 3}
    one = objects.version_hashes(b"abc", "abc", fields)
    two = objects.version_hashes(b"xyz", "xyz", fields)
    assert one.metadata_hash == two.metadata_hash
    assert one.content_hash != two.content_hash
    assert one.object_hash != two.object_hash


def test_file_hash_alone_changes_the_object_hash():
    fields = {"file_type": "py", "char_count": 3}
    stored = objects.version_hashes(b"abc", "abc", fields)
    transformed = objects.version_hashes(b"abc\r\n", "abc", fields)
    assert stored.content_hash == transformed.content_hash
    assert stored.object_hash != transformed.object_hash


def test_file_type_is_the_extension_without_its_dot():
    assert objects.file_fields("/r/Makefile", None)["file_type"] == ""
    assert objects.file_fields("/r/a.tar.gz", "x")["file_type"] == "gz"
    assert objects.file_fields("/r/.gitignore", "x")["file_type"] == ""


MAPPINGS = (
    MountMapping("/workspace", "/home/u/project", "host"),
    MountMapping("/workspace/vendor", "/srv/vendor", "nas"),
)


def test_forward_translation_takes_the_longest_matching_prefix():
    assert objects.to_canonical("/workspace/src/a.py", MAPPINGS, "container") == (
        "/home/u/project/src/a.py",
        "host",
    )
    assert objects.to_canonical("/workspace/vendor/lib.py", MAPPINGS, "container") == (
        "/srv/vendor/lib.py",
        "nas",
    )
    assert objects.to_canonical("/workspace", MAPPINGS, "container") == (
        "/home/u/project",
        "host",
    )


def test_forward_translation_without_a_match_keeps_the_path_and_the_default_filesystem():
    assert objects.to_canonical("/tmp/x", MAPPINGS, "container") == ("/tmp/x", "container")
    # A prefix matches whole path components only.
    assert objects.to_canonical("/workspace2/x", MAPPINGS, "container") == (
        "/workspace2/x",
        "container",
    )


def test_reverse_translation_shows_the_agent_path_or_falls_back_to_canonical():
    host = objects.filesystem_source("host", "/home/u/project/src/a.py")
    nas = objects.filesystem_source("nas", "/srv/vendor/lib.py")
    other = objects.filesystem_source("host", "/etc/hosts")
    wrong_fs = objects.filesystem_source("container", "/home/u/project/src/a.py")
    assert objects.to_display(host, MAPPINGS) == "/workspace/src/a.py"
    assert objects.to_display(nas, MAPPINGS) == "/workspace/vendor/lib.py"
    assert objects.to_display(other, MAPPINGS) == "/etc/hosts"
    assert objects.to_display(wrong_fs, MAPPINGS) == "/home/u/project/src/a.py"


def test_forward_then_reverse_gives_back_the_agent_path():
    canonical, fs_id = objects.to_canonical("/workspace/vendor/x/y.c", MAPPINGS, "container")
    source = objects.filesystem_source(fs_id, canonical)
    assert objects.to_display(source, MAPPINGS) == "/workspace/vendor/x/y.c"


def test_the_filesystem_id_is_sha256_of_the_machine_id(tmp_path):
    machine_id = tmp_path / "machine-id"
    machine_id.write_text("0123456789abcdef0123456789abcdef\n")
    expected = "3eb1bd439947eb762998e566ccc2e099c791118b2f40579cc4f7da2b5061b7f9"
    assert objects.filesystem_id_from_machine_id("0123456789abcdef0123456789abcdef") == expected
    assert objects.host_filesystem_id((str(tmp_path / "absent"), str(machine_id))) == expected


def test_without_a_machine_id_the_filesystem_id_is_still_stable(tmp_path):
    paths = (str(tmp_path / "absent"),)
    assert objects.host_filesystem_id(paths) == objects.host_filesystem_id(paths)
    assert len(objects.host_filesystem_id(paths)) == 64
