"""Replies rendered once and kept: a bounded cache of `render_markdown`'s HTML.

A redraw of the conversation draws every stored reply again; their text rarely changes, so
each piece of text is rendered once and its HTML kept, keyed by a hash of the text (and of
the renderer's configuration, which is fixed per process, so the text alone decides the
output). The least recently drawn piece goes first once `limit` are kept. The served
object owns the one instance (`chat.live.served.Served.replies`); its `hits` and `misses`
say how often the renderer was spared or ran. Plain Python: no Django.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

from history.markup.render import render_markdown

LIMIT = 4096  # pieces of reply text kept; a long session's replies fit many times over


class RenderedReplies:
    """`render(text)` is `render_markdown(text)`, computed once per distinct text."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self.hits = 0
        self.misses = 0
        self._kept: OrderedDict[bytes, str] = OrderedDict()
        self._lock = threading.Lock()  # redraws run in the server's worker threads

    def render(self, text: str) -> str:
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        with self._lock:
            html = self._kept.get(key)
            if html is not None:
                self._kept.move_to_end(key)
                self.hits += 1
                return html
            self.misses += 1
        html = render_markdown(text)
        with self._lock:
            self._kept[key] = html
            self._kept.move_to_end(key)
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)
        return html
