"""A command's output: kept as it arrives, stored within a cap, shown to the model within a budget.

`Captured` takes the merged stdout and stderr chunk by chunk: the first `STORED_BYTES`
(1 MB) are kept whole, and beyond them only the last `TAIL_BYTES` (64 KB), so a command
that prints gigabytes costs acdc a bounded amount of memory. `stored_text` is what a run's
row keeps (with a line where bytes were left out), `printable` (`contextcore.controls`):
no control sequence but its colours. `model_copy` is what the model reads (`plain`: no
colour codes either) and the same lines with their colours for the person's card
(`shown`): the whole output when it fits the budget (ACDC_COMMAND_OUTPUT_BYTES, 8 KB by
default), otherwise the lines that summarize its failures, then its head and tail
(`chat.repo.commands.failures`), always through the one redaction every tool result
leaves by (`chat.repo.credentials.tool_output`). The model's copy is never longer than
the budget, counted in UTF-8 bytes."""

from __future__ import annotations

from chat.repo import credentials
from chat.repo.commands import failures
from chat.repo.commands.failures import Cut
from contextcore.controls import printable

STORED_BYTES = 1_000_000
TAIL_BYTES = 64 * 1024
# Room kept for the redaction's note, so the result stays in the budget.
CUT_LINE_ROOM = 160


class Captured:
    """The output so far: its first STORED_BYTES, its last TAIL_BYTES, and its size."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = STORED_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > TAIL_BYTES:
                del self.tail[: len(self.tail) - TAIL_BYTES]

    @property
    def whole(self) -> bool:
        return self.total <= STORED_BYTES

    def stored_text(self) -> str:
        if self.whole:
            return _decoded(self.head)
        left_out = self.total - len(self.head) - len(self.tail)
        note = f"\n[… {left_out:,} bytes not stored: {self.total:,} in all …]\n"
        return _decoded(self.head) + note + _decoded(self.tail)

    def last(self, size: int) -> bytes:
        """The output's last `size` bytes (at most TAIL_BYTES once over the cap)."""
        if size <= 0:
            return b""
        return bytes((self.head if self.whole else self.tail)[-size:])


def for_model(captured: Captured, budget: int) -> str:
    """What the model reads of the output: plain text (no colours), whole when it fits,
    else its failure summary, head and tail (`model_copy`); at most `budget` UTF-8 bytes."""
    return model_copy(captured, budget).plain


def model_copy(captured: Captured, budget: int) -> Cut:
    """The model's copy (`plain`) and the same lines with their colours (`shown`, for the
    card), both redacted; the plain one is at most `budget` UTF-8 bytes."""
    text = captured.stored_text()
    plain = printable(text, colours=False)
    if captured.whole and len(plain.encode()) <= budget:
        plain = credentials.tool_output(plain)
        if len(plain.encode()) <= budget:
            return Cut(credentials.tool_output(text), plain, 0)
    room = max(budget - CUT_LINE_ROOM, 0)
    while True:
        cut = failures.cut(text, captured.total, room)
        plain = credentials.tool_output(cut.plain)
        over = len(plain.encode()) - budget
        if over <= 0 or room == 0:
            plain = plain if over <= 0 else plain.encode()[:budget].decode(errors="ignore")
            return Cut(credentials.tool_output(cut.shown), plain, cut.names_left_out)
        room = max(room - over - 16, 0)


def _decoded(data: bytes | bytearray) -> str:
    # A cut may split a character: it becomes U+FFFD, never an exception. NUL cannot be
    # stored in PostgreSQL text. A cut control sequence loses its ESC, so it is inert.
    return printable(bytes(data).decode("utf-8", errors="replace").replace("\0", "\ufffd"))
