"""The tests' way to the process's served object: build one and put it where the app keeps it.

`install` builds a `chat.live.served.Served` (with `parts` standing in for the settings'
own: a runtime talking to a fake provider, a map with no store) and sets it on the chat
app's config for the length of the test (through `monkeypatch`), so the entry points the
test reaches (the consumer, the views, the CLI's commands) hand down the same parts the
test holds. No test patches a part on a module (tests/test_layers.py checks that).
"""

from __future__ import annotations

import pytest
from django.apps import apps

from chat.live.served import Served


def install(monkeypatch: pytest.MonkeyPatch, **parts) -> Served:
    fresh = Served.build(**parts)
    monkeypatch.setattr(apps.get_app_config("chat"), "served", fresh)
    return fresh


def repository(session=None):
    """The installed served object's repository as indexing reads it (for `session`, with
    its secret floor): what an entry point hands down."""
    return apps.get_app_config("chat").served.repository.indexed(session)
