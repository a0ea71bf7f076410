"""A path in the prompt is one line naming one file, however the file is named."""

from __future__ import annotations

import json

import pytest

from contextcore.objectview import PoolItem, metadata_line
from contextcore.paths import shown
from contextcore.prompt.revisions import format_diff_block, format_file_block, format_manifest

ODD = ["new\nline.py", "a:b.py", " edge.py", '"quoted.py', "tab\there.py", "ls\u2028sep.py"]


def test_an_ordinary_path_is_written_as_it_is():
    assert shown("src/app.py") == "src/app.py"
    assert shown("données/clés.py") == "données/clés.py"
    assert shown("with space/a b.py") == "with space/a b.py"


@pytest.mark.parametrize("path", ODD)
def test_an_odd_path_is_one_json_string_that_reads_back(path):
    text = shown(path)
    assert len(text.splitlines()) == 1
    assert json.loads(text) == path


@pytest.mark.parametrize("path", [*ODD, "a b.py"])
def test_a_metadata_line_names_its_path_in_one_value(path):
    line = metadata_line(PoolItem("obj1", "file", path=path, char_count=10))
    assert len(line.splitlines()) == 1
    value = line.split(" path=", 1)[1].rsplit(" file_type=", 1)[0]
    assert json.loads(value) == path


@pytest.mark.parametrize("path", ODD)
def test_file_labels_diffs_and_the_manifest_keep_an_odd_name_on_one_line(path):
    assert format_file_block(path, "x = 1\n", 2).splitlines()[0] == f"{shown(path)} (version 2)"
    diff = format_diff_block(path, "@@ -1 +1 @@\n-a\n+b\n", 3, 2)
    assert diff.splitlines()[0].startswith(shown(path))
    manifest = format_manifest({path: 4})
    assert f"- {shown(path)}: version 4" in manifest.splitlines()


def test_an_active_objects_label_is_acdcs_own_text_and_stays_as_it_is():
    label = "ACTIVE_CONTENT id=toolcall:sess_1:call_2"
    assert format_file_block(label, "output\n", 3).splitlines()[0] == f"{label} (version 3)"
    assert f"- {label}: version 3" in format_manifest({label: 3}).splitlines()
