"""The Context panel's figures as a page or a following tab gets them.

The figures are saved with the session after every turn and every change of the sets; a
page draws them as saved. The project instructions are the one thing on the panel that
changes on disk without the session hearing of it (a new AGENTS.md): figures whose
instructions mark (`chat.repo.instructions.mark`) is not the disk's any more are figured
again, and saved, before they are drawn. A session that has sent nothing shows figures
only when the repository has instructions, so they can be seen and switched off first.
Reads (and may write) the database: call it from a thread.
"""

from __future__ import annotations

from chat.repo import instructions
from chat.session import setchanges
from history.models import Session


def current_hud(session: Session) -> dict | None:
    """The figures to draw: the saved ones, unless the instructions on disk changed since
    they were figured (then new ones); None for a session with nothing to show yet."""
    saved = (session.context_state or {}).get("hud")
    if saved is None and not instructions.present():
        return None
    if saved is not None and saved.get("instructions_mark") == instructions.mark():
        return saved
    return setchanges.refresh_sets(session.id)
