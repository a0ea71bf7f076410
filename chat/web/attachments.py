"""The composer's pending attachments: uploads and re-attached images, before a send.

The browser keeps the pending images as hidden `image` inputs in the composer and sends
their hashes with every upload, so the server can hold the per-message limit without
any server-side draft state. Every refusal is a message for the user; rejected files are
never stored, accepted ones are stored (once) even if the message is never sent. An upload
Django itself refuses to parse (too many files or fields, too large) gets the same
fragment from `UploadGuardMiddleware`, before the CSRF check would parse it and fail with
a bare "Bad Request" and a logged traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import render

from chat.turn import faults
from chat.web.params import BadNumber, whole_number
from history.images import (
    MAX_IMAGE_BYTES,
    MAX_IMAGES_PER_MESSAGE,
    SHA256,
    DecodeGate,
    ImageRejected,
    check_size,
    image_store,
    images_get,
)
from history.models import Image

log = logging.getLogger(__name__)
# A request larger than a full tray of the largest images (plus form overhead) is refused
# before Django parses it into files.
MAX_REQUEST_BYTES = MAX_IMAGES_PER_MESSAGE * MAX_IMAGE_BYTES + 64 * 1024
_UNPARSABLE = (TooManyFilesSent, TooManyFieldsSent, RequestDataTooBig, MultiPartParserError)


@dataclass
class Accepted:
    images: list[Image] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def pending_shas(values: Iterable[str]) -> list[str]:
    """The well-formed hashes already in the tray, without duplicates."""
    return list(dict.fromkeys(v for v in values if SHA256.match(v)))


def accept_uploads(
    files: Sequence[UploadedFile], pending: Sequence[str], decodes: DecodeGate
) -> Accepted:
    """Store the uploaded images (decoded under the process's `decodes` gate) beside the
    `pending` ones, within the per-message limit; each refusal is a message."""
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
            image = _store_upload(upload, decodes)
        except ImageRejected as exc:
            result.errors.append(f"{name}: {exc}")
            continue
        except Exception as exc:  # a full disk, the database gone: one line, not a 500
            fault = faults.fault_of(exc)
            if fault is None:
                raise
            log.warning("an upload was not stored: %s", fault.line("attach it again"))
            result.errors.append(f"{name} was not stored: {fault.line('attach it again')}")
            break
        if image.sha256 not in pending and image not in result.images:
            result.images.append(image)
    return result


def _store_upload(upload: UploadedFile, decodes: DecodeGate) -> Image:
    if upload.size is not None:
        check_size(upload.size)
    return image_store(upload.read(), decodes=decodes)


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


def fragment(request: HttpRequest, accepted: Accepted, status: int | None = None) -> HttpResponse:
    """The tray's answer: chips of accepted images, and every refusal (then a 400)."""
    status = status or (400 if accepted.errors else 200)
    context = {"images": accepted.images, "errors": accepted.errors}
    return render(request, "chat/_attachments.html", context, status=status)


def too_much() -> str:
    return f"The upload is too large (at most {MAX_IMAGES_PER_MESSAGE} images of 5 MB)."


class UploadGuardMiddleware:
    """Parses a multipart POST before the CSRF check does (it sits just before it), so what
    Django refuses to parse is answered like any bad upload: a 400 with the reason, one log
    line and no traceback. Nothing is stored or acted on before the refusal."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view, args, kwargs) -> HttpResponse | None:
        if request.method != "POST" or request.content_type != "multipart/form-data":
            return None
        try:
            whole_number(
                request.META.get("CONTENT_LENGTH") or "0",
                what="The upload's length",
                high=MAX_REQUEST_BYTES,
            )
        except BadNumber as exc:
            return self._refuse(request, too_much() if exc.too_large else str(exc))
        try:
            request.POST  # noqa: B018 -- parsed here, so a refusal is ours to word
        except TooManyFilesSent:
            return self._refuse(request, f"Too many files at once: {_at_most()}.")
        except _UNPARSABLE as exc:
            return self._refuse(request, f"The upload could not be read ({exc}).")
        return None

    def _refuse(self, request: HttpRequest, problem: str) -> HttpResponse:
        log.warning("upload to %s refused: %s", request.path, problem)
        return fragment(request, Accepted(errors=[problem]))


def _at_most() -> str:
    return f"attach at most {MAX_IMAGES_PER_MESSAGE} images per message"
