"""A JSON value stored deflated: the context header a session rewrites every turn.

A session's context header (the engine's figures, the HUD, the usage tail) is about 4 KB
of JSON that a turn writes twice (taking the lease rewrites the row) and every checkpoint
copies; zlib makes it about 40% of that. Nothing queries inside it in SQL, so the column is
a blob (bytea on PostgreSQL). Values written before, JSON text, still read: a value that
does not start with zlib's header is parsed as JSON.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from django import forms
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

LEVEL = 6  # zlib's default: level 9 saves 1% more here for twice the time


def pack(value: Any) -> bytes:
    text = json.dumps(value, separators=(",", ":"), cls=DjangoJSONEncoder)
    return zlib.compress(text.encode(), LEVEL)


def unpack(raw: bytes | memoryview | str) -> Any:
    if isinstance(raw, str):  # JSON text stored before (SQLite copies it as it was)
        return json.loads(raw)
    data = bytes(raw)
    if data[:1] in (b"{", b"[") or not data:
        return json.loads(data or b"null")
    return json.loads(zlib.decompress(data))


class PackedJSONField(models.BinaryField):
    """JSON in, JSON out; zlib-deflated bytes in the database."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("editable", True)
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, _, args, kwargs = super().deconstruct()
        kwargs.pop("editable", None)
        return name, "history.models.fields.PackedJSONField", args, kwargs

    @staticmethod
    def json_bytes(value: Any) -> bytes:
        """The value as JSON text, undeflated (what a JSON column held)."""
        return json.dumps(value, cls=DjangoJSONEncoder).encode()

    def get_prep_value(self, value: Any) -> Any:
        return None if value is None else pack(value)

    def get_db_prep_value(self, value: Any, connection, prepared: bool = False) -> Any:
        if not prepared:
            value = self.get_prep_value(value)
        return None if value is None else connection.Database.Binary(value)

    def from_db_value(self, value: Any, expression, connection) -> Any:
        return None if value is None else unpack(value)

    def to_python(self, value: Any) -> Any:
        if isinstance(value, bytes | memoryview):
            return unpack(value)
        return value

    def value_to_string(self, obj: models.Model) -> str:
        return json.dumps(self.value_from_object(obj), cls=DjangoJSONEncoder)

    def formfield(self, **kwargs: Any):
        """The admin edits it as JSON, as it did the JSON column."""
        return models.Field.formfield(self, **{"form_class": forms.JSONField, **kwargs})

    def get_default(self) -> Any:
        return self._get_default()  # a fresh dict, not BinaryField's b""
