"""Whether a session is shown by tabs of other processes: what lets a turn skip the layer.

Channels has no call that lists a group's members, so the tabs say where they are
themselves. On the in-memory layer every tab is in this process by construction and the
layer's own `groups` says who listens. On Redis each tab writes its channel name under the
session's key when it connects and removes it when it goes; a turn reads the key once, at
its first frame. A worker that died leaves its names behind: the turn then sends through
the layer, which is always right, only slower. Nothing here reads a library's private parts.
"""

from __future__ import annotations

import logging

import redis.asyncio as redis
from channels.layers import BaseChannelLayer, InMemoryChannelLayer
from django.conf import settings

log = logging.getLogger(__name__)

KEEP_SECONDS = 24 * 3600  # a dead worker's names are forgotten within a day


def _key(session_id: str) -> str:
    return f"acdc:tabs:{session_id}"


def _shared() -> bool:
    return bool(getattr(settings, "REDIS_URL", ""))


async def joined(session_id: str, channel: str) -> None:
    """Say that `channel`, a tab of this process, shows the session."""
    if _shared():
        await _run(session_id, lambda client, key: _add(client, key, channel))


async def left(session_id: str, channel: str) -> None:
    if _shared():
        await _run(session_id, lambda client, key: client.srem(key, channel))


async def elsewhere(layer: BaseChannelLayer, group: str, session_id: str, local: set[str]) -> bool:
    """Whether tabs other than this process's `local` ones show the session. When it cannot
    be told, the answer is yes: the group send is always right, only slower."""
    if isinstance(layer, InMemoryChannelLayer):
        return bool(set(layer.groups.get(group, {})) - local)
    if not _shared():
        return True
    found = await _run(session_id, lambda client, key: client.smembers(key))
    if found is None:
        return True
    return bool({name.decode() for name in found} - local)


async def _add(client, key: str, channel: str) -> None:
    async with client.pipeline(transaction=False) as pipe:
        await pipe.sadd(key, channel).expire(key, KEEP_SECONDS).execute()


async def _run(session_id: str, work):
    """One short connection per call: tabs come and go far less often than frames."""
    client = redis.from_url(settings.REDIS_URL)
    try:
        return await work(client, _key(session_id))
    except redis.RedisError as exc:  # one line: the tabs are told of it on their sockets
        log.warning("Redis did not answer about the session's tabs: %s", exc)
        return None
    finally:
        await client.aclose()
