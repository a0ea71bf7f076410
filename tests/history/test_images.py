"""Image validation, storage once by hash, thumbnails and the history rule."""

from __future__ import annotations

import io
import os

import pytest
from PIL import Image as PILImage

from history import services
from history.images import (
    DecodeGate,
    ImageRejected,
    history_text,
    image_store,
    images_for_messages,
    images_get,
    message_attach_images,
)
from history.models import Image, Message

pytestmark = pytest.mark.django_db


def picture(fmt: str, size: tuple[int, int] = (640, 480), mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    PILImage.new(mode, size, (200, 40, 90)).save(out, format=fmt)
    return out.getvalue()


@pytest.mark.parametrize(
    ("fmt", "mime"),
    [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")],
)
def test_it_accepts_the_four_formats(fmt, mime):
    image = image_store(picture(fmt), decodes=DecodeGate())
    assert (image.mime, image.width, image.height) == (mime, 640, 480)
    assert image.size == len(picture(fmt))


def test_it_rejects_text_bytes():
    with pytest.raises(ImageRejected, match="not an image"):
        image_store(b"hello, this is not a picture\n" * 10, decodes=DecodeGate())
    assert Image.objects.count() == 0


def test_it_rejects_a_truncated_png():
    with pytest.raises(ImageRejected, match="damaged or incomplete"):
        image_store(picture("PNG", (800, 600), "RGB")[:-200], decodes=DecodeGate())
    assert Image.objects.count() == 0


def test_it_rejects_an_image_over_five_megabytes():
    big = picture("PNG", (64, 64)) + os.urandom(6 * 1024 * 1024)
    with pytest.raises(ImageRejected, match=r"too large \(6\.0 MB; at most 5\.0 MB\)"):
        image_store(big, decodes=DecodeGate())
    assert Image.objects.count() == 0


def test_it_rejects_a_bmp():
    with pytest.raises(ImageRejected, match="PNG, JPEG, GIF and WebP.*BMP"):
        image_store(picture("BMP"), decodes=DecodeGate())


def test_it_rejects_an_empty_file():
    with pytest.raises(ImageRejected, match="empty"):
        image_store(b"", decodes=DecodeGate())


def test_the_same_bytes_are_stored_once():
    data = picture("PNG")
    first, second = image_store(data, decodes=DecodeGate()), image_store(data, decodes=DecodeGate())
    assert first.sha256 == second.sha256
    assert Image.objects.count() == 1


def test_the_thumbnail_is_webp_at_most_256_px():
    image = image_store(picture("PNG", (1200, 300), "RGBA"), decodes=DecodeGate())
    stored = Image.objects.get(pk=image.sha256)
    thumb = PILImage.open(io.BytesIO(bytes(stored.thumbnail)))
    assert thumb.format == "WEBP"
    assert max(thumb.size) == 256 and thumb.size == (256, 64)


def test_a_message_keeps_its_images_in_order():
    session = services.session_create(repository="/tmp/repo")
    message = services.message_append(session=session, role=Message.Role.USER, content="look")
    a, b = (
        image_store(picture("PNG"), decodes=DecodeGate()),
        image_store(picture("GIF"), decodes=DecodeGate()),
    )
    message_attach_images(message, [b, a])
    images = images_for_messages([message.pk])[message.pk]
    assert [i.sha256 for i in images] == [b.sha256, a.sha256]


def test_a_message_takes_at_most_five_images():
    session = services.session_create(repository="/tmp/repo")
    message = services.message_append(session=session, role=Message.Role.USER, content="many")
    images = [image_store(picture("PNG", (10 + n, 10)), decodes=DecodeGate()) for n in range(6)]
    with pytest.raises(ImageRejected, match="At most 5"):
        message_attach_images(message, images)
    assert images_for_messages([message.pk]) == {}


def test_unknown_hashes_are_rejected_with_a_message():
    with pytest.raises(ImageRejected, match="attach it again"):
        images_get(["0" * 64])


def test_history_text_appends_one_stable_reference_per_image():
    image = image_store(picture("PNG"), decodes=DecodeGate())
    assert history_text("What is this?", [image]) == (
        f"What is this?\n\n[image {image.sha256[:12]} 640x480 image/png]"
    )
    assert history_text("plain", []) == "plain"
