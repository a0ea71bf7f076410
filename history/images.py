"""Images attached to messages: validated, stored once by hash, thumbnailed, replayed.

`image_store` accepts only bytes Pillow decodes as PNG, JPEG, GIF or WebP, at most
`MAX_IMAGE_BYTES` each and at most `ACDC_MAX_IMAGE_PIXELS` pixels, judged from the header
before a pixel is decoded (a small file can decode to gigabytes); anything else raises
`ImageRejected` with a message for the user and stores nothing. At most `ACDC_IMAGE_DECODES`
images decode at once in a process (the `DecodeGate` it hands in). Bytes are keyed by their
sha256, so the same picture pasted twice is stored once. A message holds at most
`MAX_IMAGES_PER_MESSAGE` images, in order. `history_text` is the one rule for how an earlier
turn's images appear in later prompts.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import threading
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from types import MappingProxyType

from django.conf import settings
from django.db import transaction
from PIL import Image as PILImage
from PIL import UnidentifiedImageError

from history.models import Image, Message, MessageImage

MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_IMAGES_PER_MESSAGE = 5
THUMBNAIL_PX = 256
MIME_BY_FORMAT = MappingProxyType(
    {
        "PNG": "image/png",
        "JPEG": "image/jpeg",
        "GIF": "image/gif",
        "WEBP": "image/webp",
    }
)
SHA256 = re.compile(r"^[0-9a-f]{64}$")
_BLOBS = ("data", "thumbnail")
_BOMB_PIXELS = re.compile(r"\((\d+) pixels\)")
# Pillow warns of a "decompression bomb" between its limit and twice it, and raises above.
# With its limit set to ours (`_decode`), our own check on the header's size refuses first
# and names the size; the warning would only repeat it in the log.
warnings.filterwarnings("ignore", category=PILImage.DecompressionBombWarning)


class ImageRejected(ValueError):
    """The bytes cannot be stored or attached; `str(exc)` is a message for the user."""


def image_store(data: bytes, *, decodes: DecodeGate, max_bytes: int = MAX_IMAGE_BYTES) -> Image:
    """Validate `data` and store it (once), decoding it under the process's `decodes`
    gate; returns the stored row."""
    check_size(len(data), max_bytes=max_bytes)
    sha = hashlib.sha256(data).hexdigest()
    existing = Image.objects.defer(*_BLOBS).filter(pk=sha).first()
    if existing is not None:
        return existing
    mime, width, height, thumbnail = _decode(data, decodes)
    image, _ = Image.objects.get_or_create(
        sha256=sha,
        defaults={
            "mime": mime,
            "width": width,
            "height": height,
            "size": len(data),
            "data": data,
            "thumbnail": thumbnail,
        },
    )
    return image


def check_size(size: int, *, max_bytes: int = MAX_IMAGE_BYTES) -> None:
    """Reject by size alone (before reading an upload)."""
    if not size:
        raise ImageRejected("The file is empty.")
    if size > max_bytes:
        raise ImageRejected(
            f"The image is too large ({_megabytes(size)}; at most {_megabytes(max_bytes)})."
        )


def _decode(data: bytes, decodes: DecodeGate) -> tuple[str, int, int, bytes]:
    """(mime, width, height, WebP thumbnail) of valid image bytes, else ImageRejected.
    The format and size come from the header (Pillow's open is lazy); only an image
    within the pixel limit is verified and decoded, and that under `decodes`."""
    limit = settings.ACDC_MAX_IMAGE_PIXELS
    PILImage.MAX_IMAGE_PIXELS = limit  # any other Pillow use in the process is held too
    try:
        with PILImage.open(io.BytesIO(data)) as probe:
            kind = probe.format or "unknown"
            if kind not in MIME_BY_FORMAT:
                raise ImageRejected(
                    f"Only PNG, JPEG, GIF and WebP images are accepted (this is {kind})."
                )
            width, height = probe.size
            if width * height > limit:
                raise ImageRejected(_too_many_pixels(width * height, limit, f"{width}×{height}"))
            probe.verify()
        with decodes.slot(), PILImage.open(io.BytesIO(data)) as image:
            image.load()
            return MIME_BY_FORMAT[kind], width, height, _thumbnail(image)
    except ImageRejected:
        raise
    except UnidentifiedImageError:
        raise ImageRejected("The file is not an image Pillow can read.") from None
    except (PILImage.DecompressionBombError, PILImage.DecompressionBombWarning) as exc:
        found = _BOMB_PIXELS.search(str(exc))
        raise ImageRejected(_too_many_pixels(int(found[1]) if found else 0, limit)) from None
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise ImageRejected(f"The image is damaged or incomplete ({exc}).") from None


def _too_many_pixels(pixels: int, limit: int, size: str = "") -> str:
    shown = size or (f"{pixels:,} pixels" if pixels else "too many pixels")
    mp = f"{pixels / 1e6:.1f} MP; " if pixels else ""
    return f"The image is too large: {shown} ({mp}at most {limit / 1e6:.1f} MP)."


class DecodeGate:
    """At most `ACDC_IMAGE_DECODES` images decode at once in this process: a decoded image
    takes width × height × 4 bytes, whatever its file's size, so parallel uploads of big
    pictures would add up. Counts who is decoding, who waits, the most at once and all."""

    def __init__(self) -> None:
        self._turn = threading.Condition()
        self.active = 0
        self.waiting = 0
        self.peak = 0
        self.entered = 0

    @contextmanager
    def slot(self) -> Iterator[None]:
        with self._turn:
            self.waiting += 1
            self._turn.wait_for(lambda: self.active < settings.ACDC_IMAGE_DECODES)
            self.waiting -= 1
            self.active += 1
            self.entered += 1
            self.peak = max(self.peak, self.active)
        try:
            yield
        finally:
            with self._turn:
                self.active -= 1
                self._turn.notify()


def _thumbnail(image: PILImage.Image) -> bytes:
    has_alpha = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
    small = image.convert("RGBA" if has_alpha else "RGB")
    small.thumbnail((THUMBNAIL_PX, THUMBNAIL_PX))
    out = io.BytesIO()
    small.save(out, format="WEBP", quality=80)
    return out.getvalue()


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def images_get(shas: Sequence[str]) -> list[Image]:
    """The stored images for `shas`, in that order (blobs deferred); unknown ones rejected."""
    if len(shas) > MAX_IMAGES_PER_MESSAGE:
        raise ImageRejected(f"At most {MAX_IMAGES_PER_MESSAGE} images per message.")
    found = {i.sha256: i for i in Image.objects.defer(*_BLOBS).filter(pk__in=list(shas))}
    missing = [sha for sha in shas if sha not in found]
    if missing:
        raise ImageRejected(f"Image {missing[0][:12]} is not stored; attach it again.")
    return [found[sha] for sha in shas]


@transaction.atomic
def message_attach_images(message: Message, images: Sequence[Image]) -> None:
    if len(images) > MAX_IMAGES_PER_MESSAGE:
        raise ImageRejected(f"At most {MAX_IMAGES_PER_MESSAGE} images per message.")
    MessageImage.objects.bulk_create(
        MessageImage(message=message, image=image, position=n) for n, image in enumerate(images)
    )


def images_for_messages(message_ids: Iterable[str]) -> dict[str, list[Image]]:
    """Each message's images in position order, in one query (blobs deferred)."""
    links = (
        MessageImage.objects.filter(message_id__in=list(message_ids))
        .select_related("image")
        .defer(*(f"image__{blob}" for blob in _BLOBS))
        .order_by("message_id", "position")
    )
    result: dict[str, list[Image]] = {}
    for link in links:
        result.setdefault(link.message_id, []).append(link.image)
    return result


def data_url(sha: str) -> str:
    """The image as a base64 data URI, the form providers accept inline."""
    image = Image.objects.only("mime", "data").get(pk=sha)
    return f"data:{image.mime};base64,{base64.b64encode(bytes(image.data)).decode('ascii')}"


def history_reference(image: Image) -> str:
    return f"[image {image.sha256[:12]} {image.width}x{image.height} {image.mime}]"


def history_text(content: str, images: Sequence[Image]) -> str:
    """How a user message with images reads once it is history: its text, then one stable
    reference line per image. Only the turn that attaches an image sends its pixels; later
    turns (live or reloaded) see this text, so the prompt prefix never changes."""
    if not images:
        return content
    return content + "\n\n" + "\n".join(history_reference(i) for i in images)
