"""The chat app's own table: token counts of file contents, by content hash.

A file's count depends only on its bytes and the encoding, so it is stored under the
sha256 of the bytes: an unchanged file is never counted twice, in any session or process,
and a file renamed or restored from git finds its count again.
"""

from __future__ import annotations

from django.db import models


class TokenCount(models.Model):
    sha256 = models.CharField(max_length=64)
    encoding = models.CharField(max_length=32)
    tokens = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["sha256", "encoding"], name="token_count_unique")
        ]

    def __str__(self) -> str:
        return f"{self.sha256[:12]} {self.encoding} {self.tokens}"
