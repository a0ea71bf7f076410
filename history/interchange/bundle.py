"""One session's export as read from the store: the text, and the images it names.

`export_text` is what the History page's downloads and `acdc export` write, the same for
both: Markdown with every image inline (`export.ExportImage`), or JSON Lines whose
`image_refs` name each image as the `images/` folder beside the file would hold it.
`write_images` writes that folder's files (`acdc export --format jsonl --images DIR`),
which `acdc import` reads back beside the file. Non-goals: the formats (`export`).
"""

from __future__ import annotations

from pathlib import Path

from history.interchange.export import (
    ExportImage,
    image_ref,
    session_to_jsonl,
    session_to_markdown,
)
from history.models import Image
from history.selectors import SessionDetail
from history.stream.parts import with_streamed_text


def export_text(detail: SessionDetail, fmt: str) -> str:
    """The session in `fmt` ("md" or "jsonl"); a reply still streaming as far as it got."""
    messages = with_streamed_text(list(detail.messages))
    if fmt == "md":
        return session_to_markdown(detail.session, messages, _with_data(detail))
    refs = {mid: [image_ref(i.sha256, i.mime) for i in imgs] for mid, imgs in detail.images.items()}
    return session_to_jsonl(detail.session, messages, refs)


def _with_data(detail: SessionDetail) -> dict[str, list[ExportImage]]:
    """Each message's images with their bytes, in order (each image read once)."""
    shas = {info.sha256 for infos in detail.images.values() for info in infos}
    fields = ("sha256", "mime", "width", "height", "data")
    found = {
        row.sha256: ExportImage(row.sha256, row.mime, row.width, row.height, bytes(row.data))
        for row in Image.objects.filter(pk__in=shas).only(*fields)
    }
    return {
        mid: [found[info.sha256] for info in infos if info.sha256 in found]
        for mid, infos in detail.images.items()
    }


def write_images(detail: SessionDetail, folder: Path) -> list[Path]:
    """The session's images written into `folder` (made if missing), each under the name
    its JSON Lines `image_refs` give it; the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for images in _with_data(detail).values():
        for image in images:
            path = folder / image.ref
            if path not in written:
                path.write_bytes(image.data)
                written.append(path)
    return written


def images_note(detail: SessionDetail, fmt: str, folder: str | None) -> str:
    """What `acdc export` says on stderr of the session's images: how many it wrote to
    `folder`, or, for JSON Lines without one, that they are named but not written ("" when
    there are none, or for Markdown, which holds them)."""
    count = len({info.sha256 for infos in detail.images.values() for info in infos})
    if not count:
        return ""
    if folder:
        return f"{len(write_images(detail, Path(folder)))} image(s) written to {folder}"
    if fmt == "jsonl":
        return (
            f"{count} image(s) named in image_refs are not written: add --images DIR "
            "(acdc import reads them from images/ beside the file)"
        )
    return ""
