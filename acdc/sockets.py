"""Daphne's websockets as `acdc serve` runs them: the close codes the page acts on get through.

Daphne speaks WebSocket through Autobahn, which closes a socket it gives up on (a frame
over its size limit) by dropping the TCP connection, and lets an application close only
with 1000 or 3000-4999. The page acts on two codes those rules stop: 1009 (its message was
refused: chat.js puts it back in the box) and 1013 (the tab lost the channel layer:
htmx's socket reconnects by itself). `acdc serve` puts `ClosingWebSocketFactory` in
Daphne's place before it starts. Non-goals: anything else of Daphne's.
"""

from __future__ import annotations

from daphne import server as daphne_server
from daphne.ws_protocol import WebSocketProtocol

TRY_AGAIN_LATER = (1012, 1013)


class WebSocketCloses(WebSocketProtocol):
    """Daphne's, except that the server's "try again later" codes (1012, 1013) pass: Autobahn
    lets an application close only with 1000 or 3000-4999, so closing a tab that lost the
    channel layer with 1013 (chat.live.consumers) raised inside Daphne and left the socket
    open, the page none the wiser. htmx's socket reconnects on these codes by itself."""

    def serverClose(self, code: int | None = None) -> None:
        if code in TRY_AGAIN_LATER:
            self.sendCloseFrame(code=code)
        else:
            super().serverClose(code)


class ClosingWebSocketFactory(daphne_server.WebSocketFactory):
    """Daphne's, except that a socket it gives up on (a frame over its size limit) is
    closed with a close frame and the reason's code (1009) instead of a dropped TCP
    connection, which a browser reports as 1006 and htmx retries in silence: the page then
    knows its message was refused and puts it back in the box (chat.js). Its sockets close
    with 1013 too (`WebSocketCloses`)."""

    protocol = WebSocketCloses

    def setProtocolOptions(self, **options) -> None:
        super().setProtocolOptions(failByDrop=False, **options)
