"""Fixtures of the security tests: the chat tests' scripted fake model and network guard,
and a served object of each test's own (as the chat tests have)."""

from __future__ import annotations

from tests.chat.conftest import fake, no_network, own_served

__all__ = ["fake", "no_network", "own_served"]
