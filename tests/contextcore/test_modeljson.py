from __future__ import annotations

import pytest

from contextcore.modeljson import parse_json_output


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '  {"a": 1}\n',
        '```json\n{"a": 1}\n```',
        '```\n{"a": 1}\n```',
        'Here you go:\n```JSON\n{"a": 1}\n```\nAnything else?',
        'Notes {"a": 1} end',
    ],
)
def test_it_finds_a_clean_fenced_or_embedded_object(text):
    assert parse_json_output(text) == {"a": 1}


def test_it_keeps_nested_objects_whole():
    assert parse_json_output('Notes {"a": {"b": 2}} end') == {"a": {"b": 2}}
    assert parse_json_output('```json\n{"a": {"b": [1, {}]}}\n```') == {"a": {"b": [1, {}]}}


def test_of_two_fenced_objects_it_takes_the_first():
    text = '```json\n{"a": 1}\n```\nor\n```json\n{"a": 2}\n```'
    assert parse_json_output(text) == {"a": 1}


@pytest.mark.parametrize("text", ["", "no json", "[1, 2]", "42", '"text"', '{"a": 1', "{no"])
def test_anything_but_an_object_is_none(text):
    assert parse_json_output(text) is None
