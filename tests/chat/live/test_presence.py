"""Tabs say which process shows a session (chat/live/presence.py), on a real Redis: the
turn's one question, whether tabs elsewhere show it, is answered from what they said."""

from __future__ import annotations

import os

import pytest
from channels.layers import InMemoryChannelLayer
from channels_redis.core import RedisChannelLayer

from chat.live import presence

REDIS = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"


@pytest.fixture
def on_redis(settings):
    settings.REDIS_URL = REDIS
    return RedisChannelLayer(hosts=[REDIS])


async def test_tabs_here_alone_are_not_elsewhere_until_another_process_says_so(on_redis):
    session, group = "sess_presence_1", "session.sess_presence_1"
    await presence.joined(session, "here!1")
    assert not await presence.elsewhere(on_redis, group, session, {"here!1"})
    await presence.joined(session, "there!1")
    assert await presence.elsewhere(on_redis, group, session, {"here!1"})
    await presence.left(session, "there!1")
    assert not await presence.elsewhere(on_redis, group, session, {"here!1"})
    await presence.left(session, "here!1")


async def test_a_redis_that_does_not_answer_means_send_through_the_layer(settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    layer = RedisChannelLayer(hosts=[settings.REDIS_URL])
    await presence.joined("sess_presence_2", "here!2")  # says so in the log, raises nothing
    assert await presence.elsewhere(layer, "session.sess_presence_2", "sess_presence_2", set())


async def test_in_memory_every_listener_is_in_this_process_and_the_group_says_who(settings):
    settings.REDIS_URL = ""
    layer = InMemoryChannelLayer()
    await layer.group_add("session.s3", "here!3")
    assert not await presence.elsewhere(layer, "session.s3", "s3", {"here!3"})
    await layer.group_add("session.s3", "other!3")
    assert await presence.elsewhere(layer, "session.s3", "s3", {"here!3"})
