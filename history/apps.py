from __future__ import annotations

from django.apps import AppConfig
from django.db.backends.signals import connection_created

from history import dbfaults


class HistoryConfig(AppConfig):
    name = "history"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        connection_created.connect(dbfaults.keep_private, dispatch_uid="acdc-private-db")
