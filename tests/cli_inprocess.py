"""`acdc` run in the test's own process, through its entry point (`acdc.cli.main`).

What a command parses, prints and returns is the same in this process as in one of its
own, without a start that imports litellm each time; tests whose subject is the process
(signals, a closed pipe, start-up, the settings read when it starts) run it as a process.
`Cli` gives each command what a process of its own would start with: the test's
repository and settings, a served object built after them (the runtime reads its
recording file and the like from the settings once), and the fake model's script read
afresh from ACDC_FAKE_SCRIPT (the provider is the process's; `close` puts its own back).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from acdc.cli import main
from chat.llm.offline import FakeScript
from chat.llm.sdk import acdc_provider
from tests.serving import install

SETTINGS = {  # the variables these tests set, and the setting each becomes
    "ACDC_EDITS": lambda value: value.lower() in ("1", "true", "yes", "on"),
    "ACDC_RECORD_REQUESTS": str,
    "ACDC_COMPACTION_TRIGGER_TOKENS": int,
    "ACDC_VERBATIM_WINDOW_TOKENS": int,
    "ACDC_CHECKPOINT_EVERY": int,
}


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


class Cli:
    def __init__(self, root: Path, settings, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
        self.settings, self.monkeypatch, self.capsys = settings, monkeypatch, capsys
        self.provider = acdc_provider()
        self.previous = self.provider.script
        settings.ACDC_REPO = root
        settings.ACDC_MODEL = ""  # as for a process: the terminal sets no ACDC_ variable
        settings.ACDC_KEEP_WARM = settings.ACDC_KEEP_WARM  # a chat turns it off: put back
        for name in [name for name in os.environ if name.startswith("ACDC_")]:
            monkeypatch.delenv(name)  # some are read when used (the default model)
        monkeypatch.setenv("ACDC_REPO", str(root))  # where the hand-off looks for a server

    def __call__(self, *args: str, **env: str | None) -> Ran:
        """`acdc *args` with `env`'s variables (None takes one away): a setting's become
        the setting, the rest (ACDC_FAKE_SCRIPT, read when the fake model answers, the
        provider keys) stay variables."""
        for name, value in env.items():
            if value is None:
                self.monkeypatch.delenv(name, raising=False)
            elif name in SETTINGS:
                setattr(self.settings, name, SETTINGS[name](value))
            else:
                self.monkeypatch.setenv(name, value)
        install(self.monkeypatch)
        self.provider.install(FakeScript.from_env())
        self.capsys.readouterr()
        status = main(list(args))
        out, err = self.capsys.readouterr()
        return Ran(status, out, err)

    def close(self) -> None:
        self.provider.install(self.previous)


@pytest.fixture(name="cli")
def cli_fixture(root: Path, settings, monkeypatch: pytest.MonkeyPatch, capsys) -> Iterator[Cli]:
    """`acdc *args` in this process, for `root` (a module imports this to use it)."""
    running = Cli(root, settings, monkeypatch, capsys)
    yield running
    running.close()
