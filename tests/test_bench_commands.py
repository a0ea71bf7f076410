"""`acdc bench commands`: its table and result file (the plumbing, never the timings)."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def test_the_commands_benchmark_sets_the_sandbox_beside_a_plain_run(tmp_path):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ACDC_")}
    environ.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-m", "acdc", "bench", "commands", "--quick", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        env=environ,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    table = (tmp_path / "commands.md").read_text()
    for label in ("subprocess.run(['true'])", "acdc's runner, no sandbox", "in bubblewrap"):
        assert label in table
    assert "The sandbox adds " in table and "Machine: " in table
    data = json.loads((tmp_path / "commands.json").read_text())
    assert len(data["ms"]["sandboxed"]) == data["runs"] == 5
    assert data["output"]["bytes"] >= 5 * 1024 * 1024 - 100
    assert data["output"]["model_bytes"] <= 8192
    # In a served turn (the offline model calls run_command), beside the same turn printing
    # one line and the floor of a plain subprocess.
    assert "what the 5 MB cost the server" in table and "(the floor)" in table
    assert len(data["served_cpu_s"]["loud"]) == len(data["served_cpu_s"]["quiet"]) == 1
