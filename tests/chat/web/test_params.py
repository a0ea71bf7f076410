"""Numbers a client sends are parsed one way: ASCII digits within bounds, else a clear 400
(or an error frame), never a 500 or a dropped socket; '²'.isdigit() is True, int('²')
raises, and a 500-digit id parses but overflows the database."""

from __future__ import annotations

import json
from html import unescape

import pytest

from chat.live.protocol import FrameError, parse_frame
from chat.web.params import MAX_ID, BadNumber, whole_number

BAD = ["²", "-1", "1e9", "", "x", "9" * 500, " 7", "1_000", "٣"]


@pytest.mark.parametrize("raw", BAD)
def test_anything_but_plain_digits_in_bounds_is_refused_with_a_sentence(raw):
    with pytest.raises(BadNumber) as refused:
        whole_number(raw, what="The hunk", low=1, high=1000)

    said = str(refused.value)
    assert said.startswith("The hunk must be ") and said.endswith(".") and len(said) < 120


def test_digits_within_bounds_are_the_number_and_too_many_digits_say_so():
    assert whole_number("0042", what="The hunk", high=100) == 42
    assert whole_number(str(MAX_ID), what="The id", high=MAX_ID) == MAX_ID
    with pytest.raises(BadNumber) as refused:
        whole_number("9" * 500, what="The id", high=MAX_ID)
    assert refused.value.too_large
    with pytest.raises(BadNumber) as refused:
        whole_number(None, what="The id", high=MAX_ID)
    assert "not nothing" in str(refused.value) and not refused.value.too_large


@pytest.mark.django_db
@pytest.mark.parametrize("raw", ["²", "-1", "1e9", "x", "9" * 500, str(MAX_ID + 1)])
def test_a_bad_checkpoint_number_is_a_400_that_says_why(client, session, raw):
    response = client.post(f"/s/{session.id}/checkpoints/{raw}/rollback/")

    assert response.status_code == 400
    assert "The checkpoint must be " in response.content.decode()


@pytest.mark.django_db
def test_a_missing_checkpoint_number_is_no_route_and_a_real_one_is_still_looked_up(client, session):
    assert client.post(f"/s/{session.id}/checkpoints//rollback/").status_code == 404
    missing = client.post(f"/s/{session.id}/checkpoints/{MAX_ID}/rollback/")
    assert missing.status_code == 200 and "no such checkpoint" in missing.content.decode()


@pytest.mark.django_db
def test_an_upload_without_a_length_is_read_as_an_empty_one(client, session):
    response = client.post(f"/s/{session.id}/images/", {"image": []}, CONTENT_LENGTH="")

    assert response.status_code == 400
    assert "Choose an image to attach." in response.content.decode()  # the form's own check


@pytest.mark.django_db
@pytest.mark.parametrize("raw", ["²", "-1", "1e9", "x", "9" * 500])
def test_a_bad_upload_length_gets_the_tray_s_refusal(client, session, raw):
    response = client.post(
        f"/s/{session.id}/images/", {"image": []}, CONTENT_LENGTH=raw
    )  # the multipart body is built by the client; only the header lies

    assert response.status_code == 400
    html = unescape(response.content.decode())
    assert 'id="attachment-errors"' in html
    said = "The upload is too large" if raw == "9" * 500 else "The upload's length must be"
    assert said in html


@pytest.mark.parametrize("line", ['"²"', "-1", "1e9", '""', '"x"', "9" * 500, "10000001"])
def test_a_mention_s_line_out_of_bounds_is_a_clear_frame_error(line):
    mention = '{"path": "a.py", "symbol": "f", "line": ' + line + "}"
    frame = json.dumps({"message": "hi", "mention": mention})

    with pytest.raises(FrameError, match="A mention must name a file"):
        parse_frame(frame, None, max_bytes=1_000_000)
