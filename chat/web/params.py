"""Whole numbers sent by a client (a form field, a URL part, a header), parsed one way.

`int()` on what a client sent is a 500 waiting to happen: `'²'.isdigit()` is True and
`int('²')` raises, `int(' -1 ')` and `int('1_000')` succeed, and a 500-digit id parses
but overflows the database. `whole_number` takes ASCII digits only, within bounds, and
raises `BadNumber` with a sentence for the person; a view answers it with `bad_request`
(400). Frames bound their numbers in `chat.live.protocol`'s schema instead.
"""

from __future__ import annotations

from django.http import HttpResponseBadRequest

MAX_ID = 2**63 - 1  # the largest primary key (BigAutoField) a database holds


class BadNumber(ValueError):
    def __init__(self, message: str, *, too_large: bool = False) -> None:
        super().__init__(message)
        self.too_large = too_large  # digits, only too many of them


def whole_number(raw: object, *, what: str, high: int, low: int = 0) -> int:
    """`raw` as an int from `low` to `high`; `what` names it in the refusal ("The hunk")."""
    text = raw if isinstance(raw, str) else ""
    if not (text.isascii() and text.isdigit()):
        raise BadNumber(f"{what} must be a whole number, not {_shown(raw)}.")
    # Compared by length first: int() of a huge string is slow and may be refused.
    digits = text.lstrip("0") or "0"
    if len(digits) > len(str(high)) or not low <= int(digits) <= high:
        raise BadNumber(
            f"{what} must be from {low:,} to {high:,}, not {_shown(raw)}.",
            too_large=len(digits) > len(str(high)) or int(digits) > high,
        )
    return int(digits)


def bad_request(exc: BadNumber) -> HttpResponseBadRequest:
    return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")


def _shown(raw: object) -> str:
    if not isinstance(raw, str) or not raw:
        return "nothing"
    return repr(raw) if len(raw) <= 24 else f"{raw[:20]!r}… ({len(raw):,} characters)"
