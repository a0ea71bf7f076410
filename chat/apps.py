from __future__ import annotations

from django.apps import AppConfig


class ChatConfig(AppConfig):
    """The chat app, wired: its runtime (LLM client, model facts, token counters) is
    built here once, from settings, and handed to every session context it serves."""

    name = "chat"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from chat.llm.runtime import Runtime

        self.runtime = Runtime.from_settings()
