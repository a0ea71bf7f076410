"""Copies of a found value in other spellings are found wherever the value sits in them."""

from __future__ import annotations

import base64
from urllib.parse import quote, quote_plus

from chat.repo.secretvalues import Copies

VALUE = "s3cr3t:Pa ss/w0rd+x"
COPIES = Copies.of({VALUE: "[M]", "short": "[S]"})


def test_base64_at_any_offset_in_either_alphabet_is_replaced_whole():
    for prefix in ("", "u", "us", "user:"):
        data = (prefix + VALUE + "!").encode()
        for encoded in (base64.b64encode(data), base64.urlsafe_b64encode(data).rstrip(b"=")):
            assert COPIES.redact(f'auth="{encoded.decode()}";') == 'auth="[M]";'


def test_hex_in_either_case_and_url_encoded_copies_are_replaced():
    hexed = VALUE.encode().hex()
    text = f"0x{hexed.upper()} {hexed} ?p={quote(VALUE, safe='')}&q={quote_plus(VALUE)}"
    assert COPIES.redact(text) == "0x[M] [M] ?p=[M]&q=[M]"
    assert COPIES.redact(f"as is: {VALUE}.") == "as is: [M]."


def test_a_short_value_and_a_clean_text_are_left_alone():
    clean = f"short {base64.b64encode(b'short').decode()} {b'short'.hex()}"
    assert COPIES.redact(clean) is clean
