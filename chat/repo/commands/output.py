"""A command's output: kept as it arrives, stored within a cap, shown to the model within a budget.

`Captured` takes the merged stdout and stderr chunk by chunk: the first `STORED_BYTES`
(1 MB) are kept whole, and beyond them only the last `TAIL_BYTES` (64 KB), so a command
that prints gigabytes costs acdc a bounded amount of memory. `stored_text` is what a run's
row keeps (with a line where bytes were left out). `for_model` is what the model reads:
the whole output when it fits the budget (ACDC_COMMAND_OUTPUT_BYTES, 8 KB by default),
otherwise its head and its tail (where a test runner prints its summary) around one line
saying how much was cut, and always through the one redaction every tool result leaves
by (`chat.repo.credentials.tool_output`). The text returned is never longer than the
budget, counted in UTF-8 bytes. Both are `printable` (`contextcore.controls`): what a
command prints reaches no terminal, page or model with a control sequence but its colours
(no clipboard write, title, link, cursor movement or erase; a lone CR is a line break).
"""

from __future__ import annotations

from chat.repo import credentials
from contextcore.controls import printable

STORED_BYTES = 1_000_000
TAIL_BYTES = 64 * 1024
# Room kept for the cut line and the redaction's note, so the result stays in the budget.
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
    """What the model reads of the output: whole when it fits, else head, cut line, tail;
    redacted, and at most `budget` UTF-8 bytes."""
    if captured.total <= budget:
        text = credentials.tool_output(_decoded(captured.head))
        if len(text.encode()) <= budget:
            return text
    room = max(budget - CUT_LINE_ROOM, 0)
    while True:
        head_size = room // 2
        head = _line_end(bytes(captured.head[:head_size]))
        tail = _line_start(captured.last(room - head_size))
        cut = captured.total - len(head) - len(tail)
        line = (
            f"\n[… {cut:,} bytes of output cut here: {captured.total:,} in all; the first "
            f"{len(head):,} and the last {len(tail):,} are shown]\n"
        )
        text = credentials.tool_output(_decoded(head) + line + _decoded(tail))
        over = len(text.encode()) - budget
        if over <= 0 or room == 0:
            return text if over <= 0 else text.encode()[:budget].decode(errors="ignore")
        room = max(room - over - 16, 0)


def _line_end(data: bytes) -> bytes:
    """`data` up to its last line break, when that keeps at least half of it."""
    at = data.rfind(b"\n")
    return data[: at + 1] if at >= len(data) // 2 else data


def _line_start(data: bytes) -> bytes:
    """`data` from after its first line break, when that keeps at least half of it."""
    at = data.find(b"\n")
    return data[at + 1 :] if 0 <= at < len(data) // 2 else data


def _decoded(data: bytes | bytearray) -> str:
    # A cut may split a character: it becomes U+FFFD, never an exception. NUL cannot be
    # stored in PostgreSQL text. A cut control sequence loses its ESC, so it is inert.
    return printable(bytes(data).decode("utf-8", errors="replace").replace("\0", "\ufffd"))
