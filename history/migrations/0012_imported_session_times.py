"""Sessions imported before the importer kept their messages' times get those times now.

An imported session is recognised by a creation time later than its first message: acdc
creates a session before its messages, only `acdc import-history` writes older ones. Such a
session is dated by its messages, so History's order and the session `/` opens stop being
taken over by an old import. Undated lines (stored as 1970) are left out of the span.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.db import migrations
from django.db.models import Max, Min

DATED = datetime(1970, 1, 2, tzinfo=UTC)
CLOCK_SLACK = timedelta(minutes=1)


def _date_imported_sessions(apps, schema_editor) -> None:
    Session = apps.get_model("history", "Session")
    Message = apps.get_model("history", "Message")
    spans = (
        Message.objects.filter(timestamp__gte=DATED)
        .order_by()
        .values("session_id")
        .annotate(first=Min("timestamp"), last=Max("timestamp"))
    )
    created = dict(Session.objects.values_list("id", "created_at"))
    for span in spans.iterator():
        created_at = created.get(span["session_id"])
        if created_at is not None and created_at > span["first"] + CLOCK_SLACK:
            Session.objects.filter(pk=span["session_id"]).update(
                created_at=span["first"], updated_at=span["last"]
            )


class Migration(migrations.Migration):
    dependencies = [("history", "0011_turn_stop")]

    operations = [migrations.RunPython(_date_imported_sessions, migrations.RunPython.noop)]
