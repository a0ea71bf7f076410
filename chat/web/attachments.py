"""The composer's pending attachments: uploads and re-attached images, before a send.

The browser keeps the pending images as hidden `image` inputs in the composer and sends
their hashes with every upload, so the server can hold the per-message limit without
any server-side draft state. Every refusal is a message for the user; rejected files are
never stored, accepted ones are stored (once) even if the message is never sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.core.files.uploadedfile import UploadedFile

from history.images import (
    MAX_IMAGE_BYTES,
    MAX_IMAGES_PER_MESSAGE,
    SHA256,
    ImageRejected,
    check_size,
    image_store,
    images_get,
)
from history.models import Image

# A request larger than a full tray of the largest images (plus form overhead) is refused
# before Django spools it to disk.
MAX_REQUEST_BYTES = MAX_IMAGES_PER_MESSAGE * MAX_IMAGE_BYTES + 64 * 1024


@dataclass
class Accepted:
    images: list[Image] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def pending_shas(values: Iterable[str]) -> list[str]:
    """The well-formed hashes already in the tray, without duplicates."""
    return list(dict.fromkeys(v for v in values if SHA256.match(v)))


def accept_uploads(files: Sequence[UploadedFile], pending: Sequence[str]) -> Accepted:
    result = Accepted()
    if not files:
        result.errors.append("Choose an image to attach.")
    room = MAX_IMAGES_PER_MESSAGE - len(pending)
    for upload in files:
        name = upload.name or "The file"
        if len(result.images) >= room:
            result.errors.append(f"{name}: at most {MAX_IMAGES_PER_MESSAGE} images per message.")
            continue
        try:
            image = _store_upload(upload)
        except ImageRejected as exc:
            result.errors.append(f"{name}: {exc}")
            continue
        if image.sha256 not in pending and image not in result.images:
            result.images.append(image)
    return result


def _store_upload(upload: UploadedFile) -> Image:
    if upload.size is not None:
        check_size(upload.size)
    return image_store(upload.read())


def accept_existing(sha: str, pending: Sequence[str]) -> Accepted:
    """Re-attach a stored image to the next message."""
    result = Accepted()
    if sha in pending:
        return result
    if len(pending) >= MAX_IMAGES_PER_MESSAGE:
        result.errors.append(f"At most {MAX_IMAGES_PER_MESSAGE} images per message.")
        return result
    try:
        result.images = images_get([sha])
    except ImageRejected as exc:
        result.errors.append(str(exc))
    return result
