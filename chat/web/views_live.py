"""Whether this worker reaches its channel layer: what a page asks when its socket fails.

A socket that finds Redis down is refused before it opens (chat.live.consumers), so the
browser learns only that it closed. The page then asks here: 204 while the layer answers,
503 with the one line to show while it does not (Redis stopped, or silent for
`PROBE_SECONDS`). The check is one group discard of a name no socket holds. Non-goals:
PostgreSQL (a page that needs it answers its own line, `FaultMiddleware`).
"""

from __future__ import annotations

import asyncio
import logging

from channels.layers import get_channel_layer
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from chat.turn import faults

log = logging.getLogger(__name__)
PROBE_SECONDS = 3.0
PROBE_GROUP = "acdc.live-probe"
PROBE_CHANNEL = "acdc.live-probe!none"


@require_GET
async def live_probe(request: HttpRequest) -> HttpResponse:
    try:
        async with asyncio.timeout(PROBE_SECONDS):
            await get_channel_layer().group_discard(PROBE_GROUP, PROBE_CHANNEL)
    except TimeoutError:
        return _unreachable(faults.Fault("redis", detail=f"no answer in {PROBE_SECONDS:g} s"))
    except Exception as exc:
        fault = faults.fault_of(exc)
        if fault is None or fault.kind != "redis":
            raise
        return _unreachable(fault)
    return HttpResponse(status=204)


def _unreachable(fault: faults.Fault) -> HttpResponse:
    line = fault.line()
    log.info("a page asked for the live channel: %s", line)
    return HttpResponse(line, status=503, content_type="text/plain; charset=utf-8")
