"""The wire bench's driver reads the page's frames as the server draws them today: the
Files panel's answer to a choice is recognised (a stale pattern left the bench waiting)."""

from __future__ import annotations

from pathlib import Path

from bench.cache.wire_drive import answers
from chat.web.panels.selection import selection_update


def test_the_driver_knows_the_panels_answer_to_its_choice(tmp_path: Path, served):
    (tmp_path / "app.py").write_text("print('hi')\n")
    chosen = {"before": ([], []), "after": (["app.py"], [])}
    frame = selection_update(served.files, tmp_path, **chosen, answers="turn3")
    assert answers(frame, "turn3")
    assert not answers(frame, "turn4")
