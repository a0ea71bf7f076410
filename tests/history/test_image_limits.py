"""Images are judged by their header before a pixel is decoded (a small file can decode
to gigabytes), a decompression bomb is refused, and at most `ACDC_IMAGE_DECODES` images
decode at once in a process."""

from __future__ import annotations

import io
import threading
import time
import zlib

import pytest
from django.db import connection
from django.test import override_settings
from PIL import Image as PILImage

from history.images import DecodeGate, ImageRejected, image_store
from history.models import Image

WAIT = 30.0
# Pillow warns of what our own check then refuses; production silences it (history.images).
pytestmark = pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")


@pytest.fixture
def gate() -> DecodeGate:
    """The decode gate a process would hand in, the test's own."""
    return DecodeGate()


def png(size: tuple[int, int], mode: str = "1") -> bytes:
    """A real PNG; bilevel, so 7000×7000 is a few kilobytes on disk and 6 MB to make."""
    out = io.BytesIO()
    PILImage.new(mode, size, 1).save(out, format="PNG")
    return out.getvalue()


def with_garbled_pixels(data: bytes) -> bytes:
    """The same PNG with its compressed pixel data garbled (chunk lengths and CRCs kept
    valid): its header reads fine, any attempt to decode it fails."""
    start = data.index(b"IDAT") + 4
    length = int.from_bytes(data[start - 8 : start - 4], "big")
    garbage = bytes(b ^ 0x5A for b in data[start : start + length])
    crc = zlib.crc32(b"IDAT" + garbage).to_bytes(4, "big")
    return data[:start] + garbage + crc + data[start + length + 4 :]


@pytest.mark.django_db
def test_a_7000_by_7000_png_is_refused_by_its_header_and_never_decoded(gate):
    data = png((7000, 7000))
    assert len(data) < 200_000
    with pytest.raises(ImageRejected) as refused:
        image_store(data, decodes=gate)
    assert str(refused.value) == "The image is too large: 7000×7000 (49.0 MP; at most 40.0 MP)."
    assert gate.entered == 0
    assert Image.objects.count() == 0


@pytest.mark.django_db
def test_the_pixel_limit_is_judged_before_the_pixels_are_read(gate):
    """Garbled pixel data would fail any decode or verify as damaged: the refusal names the
    size, so nothing past the header was read."""
    with pytest.raises(ImageRejected, match=r"7000×7000 \(49\.0 MP; at most 40\.0 MP\)"):
        image_store(with_garbled_pixels(png((7000, 7000))), decodes=gate)
    with pytest.raises(ImageRejected, match="damaged"):
        image_store(with_garbled_pixels(png((700, 700))), decodes=gate)


@pytest.mark.django_db
@override_settings(ACDC_MAX_IMAGE_PIXELS=1_000_000)
def test_the_limit_is_a_setting_and_holds_pillow_to_it_against_bombs(gate):
    with pytest.raises(ImageRejected, match=r"1300×1300 \(1\.7 MP; at most 1\.0 MP\)"):
        image_store(png((1300, 1300)), decodes=gate)
    # Over twice Pillow's limit it refuses at open, before our own look at the header.
    with pytest.raises(ImageRejected, match=r"4,000,000 pixels \(4\.0 MP; at most 1\.0 MP\)"):
        image_store(png((2000, 2000)), decodes=gate)
    assert PILImage.MAX_IMAGE_PIXELS == 1_000_000
    assert image_store(png((1000, 1000)), decodes=gate).width == 1000


def _eventually(condition) -> bool:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.mark.django_db(transaction=True)
@override_settings(ACDC_IMAGE_DECODES=2)
def test_at_most_the_configured_number_of_images_decode_at_once(gate):
    pictures = [png((900 + n, 900), "RGB") for n in range(5)]
    failures: list[BaseException] = []

    def store(data: bytes) -> None:
        try:
            image_store(data, decodes=gate)
        except BaseException as exc:  # reported by the test thread
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=store, args=(data,)) for data in pictures]
    with gate.slot(), gate.slot():  # both places taken: every upload must wait
        for thread in threads:
            thread.start()
        assert _eventually(lambda: gate.waiting == len(pictures)), gate.waiting
        assert Image.objects.count() == 0
    for thread in threads:
        thread.join(WAIT)
    assert not failures
    assert Image.objects.count() == len(pictures)
    assert gate.peak == 2 and gate.active == 0
