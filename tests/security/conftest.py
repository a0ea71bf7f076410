"""Fixtures of the security tests: the chat tests' scripted fake model and network guard."""

from __future__ import annotations

from tests.chat.conftest import background_counts_finish, fake, no_network

__all__ = ["background_counts_finish", "fake", "no_network"]
