from __future__ import annotations

from django.apps import AppConfig


class ChatConfig(AppConfig):
    """The chat app, wired: what the process serves (its runtime, repository maps, counts,
    turn host, watchers and the rest: `chat.live.served.Served`) is built here once, from
    settings; entry points fetch it from here and hand its parts down."""

    name = "chat"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from chat.live.served import Served

        self.served = Served.build()
