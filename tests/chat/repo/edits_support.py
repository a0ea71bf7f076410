"""Edits proposed and accepted at once, for tests whose subject is what comes after."""

from __future__ import annotations

from chat.repo.edits.applying import accept
from chat.repo.edits.checks import SetOutcome
from chat.repo.edits.proposing import propose
from history.models import PendingEdit


def written(session, ops, *, repo, message=None, turn_id: str = "") -> SetOutcome:
    """`ops` proposed as one set and accepted by the person: what Accept all does."""
    proposed = propose(session, ops, repo=repo, message=message, turn_id=turn_id)
    ids = PendingEdit.objects.filter(session=session, status=PendingEdit.Status.PENDING)
    if not ids.exists():
        return proposed
    return accept(session, list(ids.values_list("pk", flat=True)), repo=repo)
