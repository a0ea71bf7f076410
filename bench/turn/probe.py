"""Read one session's stored messages through the ORM, in a process of its own.

`python -m bench.turn.probe SESSION_ID` prints a JSON list of the session's messages
(role, status, content) as the database holds them, with the settings the environment
gives (ACDC_REPO, ACDC_DATA_DIR, DATABASE_URL): the kill trials run it against a server's
database after the server was killed and restarted. `stored_messages` runs it. Read-only:
no migration, no write.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from bench import CHECKOUT


def stored_messages(session_id: str, environ: dict[str, str]) -> list[dict[str, str]]:
    done = subprocess.run(
        [sys.executable, "-m", "bench.turn.probe", session_id],
        env=environ,
        cwd=CHECKOUT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


def main(session_id: str) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "acdc.settings")
    import django

    django.setup()
    # Lazy: models load only once Django is set up on the server's settings.
    from history.models import Message

    rows = Message.objects.filter(session_id=session_id).order_by("seq")
    found = [{"role": m.role, "status": m.status, "content": m.content} for m in rows]
    json.dump(found, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
