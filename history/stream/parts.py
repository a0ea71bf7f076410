"""A streaming reply's text, saved as it comes without rewriting the message row.

While a reply streams, its message row keeps empty content and what is new each second is
appended as a `StreamPart` (the message and the character offset it starts at). The row's
content, and with it the word and trigram search indexes that follow content, is written
once, when the reply ends in any way: `message_finish` for a turn that ends, `end_streaming`
for replies whose worker died (found at start-up or by any worker that notices). The parts
go when the row has its text. Readers that draw a streaming reply use `with_streamed_text`.
Non-goals: ordering between workers (one turn owns a reply), search over a reply that streams.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable

from django.db import connection, models, transaction


class StreamPart(models.Model):
    """Characters [offset, offset + len(text)) of a reply that is still streaming."""

    pk = models.CompositePrimaryKey("message", "offset")
    # The primary key's own index starts with the message: no second index for the FK.
    message = models.ForeignKey(
        "history.Message", on_delete=models.CASCADE, related_name="stream_parts", db_index=False
    )
    offset = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        app_label = "history"


def stream_append(*, message_id: str, offset: int, text: str) -> None:
    """Store the text shown since the last save; a few hundred bytes, one short row.

    Written with one statement made once: the ORM's `create` costs several times the write
    itself, and this runs every second of every reply."""
    if text:
        with connection.cursor() as cursor:
            cursor.execute(_insert_part(connection.vendor), [message_id, offset, text])


@functools.lru_cache(maxsize=4)
def _insert_part(vendor: str) -> str:
    """The statement for `vendor`'s database (quoting differs)."""
    quote, fields = connection.ops.quote_name, StreamPart._meta
    names = ("message", "offset", "text")
    columns = ", ".join(quote(fields.get_field(name).column) for name in names)
    return f"INSERT INTO {quote(fields.db_table)} ({columns}) VALUES (%s, %s, %s)"


def streamed_texts(message_ids: Iterable[str]) -> dict[str, str]:
    """The parts of each message, joined in order (one query)."""
    joined: dict[str, list[str]] = defaultdict(list)
    parts = StreamPart.objects.filter(message_id__in=list(message_ids)).order_by(
        "message_id", "offset"
    )
    for message_id, text in parts.values_list("message_id", "text"):
        joined[message_id].append(text)
    return {message_id: "".join(texts) for message_id, texts in joined.items()}


def with_streamed_text(rows: list) -> list:
    """`rows` (messages), with each streaming one's content as shown so far."""
    streaming = [m for m in rows if m.status == "streaming"]
    if streaming:
        texts = streamed_texts(m.id for m in streaming)
        for message in streaming:
            message.content += texts.get(message.id, "")
    return rows


def end_streaming(rows: models.QuerySet, error: str) -> int:
    """End the streaming messages of `rows` as interrupted, saying `error`: each gets its
    text from its parts in one write of the row, the only one its search index sees."""
    with transaction.atomic():
        pairs = list(rows.values_list("pk", "content"))
        texts = streamed_texts(pk for pk, _ in pairs)
        ended = [
            pk
            for pk, content in pairs
            if rows.filter(pk=pk).update(
                content=content + texts.get(pk, ""), status="interrupted", error=error
            )
        ]
        StreamPart.objects.filter(message_id__in=ended).delete()
    return len(ended)
