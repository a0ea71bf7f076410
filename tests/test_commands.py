"""`acdc serve` starts Daphne with a websocket size limit above acdc's own."""

from __future__ import annotations

from daphne.cli import CommandLineInterface
from django.conf import settings

from acdc.commands import daphne_arguments


class _Recorder:
    """Stands in for Daphne's Server: keeps what it was given, serves nothing."""

    given: dict = {}
    abort_start = False

    def __init__(self, **options) -> None:
        _Recorder.given = options

    def run(self) -> None:
        pass


def test_daphne_lets_a_frame_over_the_acdc_limit_through_to_the_consumer():
    cli = CommandLineInterface()
    cli.server_class = _Recorder
    cli.run(daphne_arguments("127.0.0.1", 8123))
    given = _Recorder.given
    assert given["endpoints"] == ["tcp:port=8123:interface=127.0.0.1"]
    assert given["websocket_max_message_size"] >= 2 * settings.ACDC_MAX_FRAME_BYTES
    assert given["websocket_max_frame_size"] >= 2 * settings.ACDC_MAX_FRAME_BYTES
