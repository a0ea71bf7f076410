"""Limits on a run, with real bubblewrap and real processes: a run trying 1,000 processes,
allocating 4 GiB, writing past the file limit or filling its /tmp is stopped and the outcome
names the limit;
a normal pytest run passes under the default limits, in a cgroup acdc made for it that is
gone after it, with no other group changed; a declaration may not ask for a timeout past the
maximum; the Commands part says which limits hold here and how."""

from __future__ import annotations

import asyncio
import os
import sys
from asyncio.subprocess import PIPE, STDOUT
from pathlib import Path

import pytest
from django.template.loader import render_to_string

from chat.repo.commands import declaring
from chat.repo.commands.declaring import DeclarationError
from chat.repo.commands.limits import PREFIX, Limits, Place, RunGroup, held_here
from chat.repo.commands.output import Captured
from chat.repo.commands.runner import CommandRuns, run_argv
from chat.repo.commands.sandbox import Sandbox
from chat.web.views_commands import commands_context
from history.models import DeclaredCommand
from tests.chat.repo.commands_support import PYTHON

FORKS = """
import os, sys
r, w = os.pipe()
for n in range(1000):
    try:
        pid = os.fork()
    except OSError as exc:
        print("refused after", n, exc)
        sys.exit(1)
    if pid == 0:
        os.read(r, 1)  # waits till the run ends
        os._exit(0)
print("all 1000 started")
"""


@pytest.fixture
def sandbox() -> Sandbox:
    found = Sandbox.probe()
    assert found.available, f"bubblewrap is needed (make test installs it): {found.reason}"
    return found


@pytest.fixture
def data_dir(root: Path) -> Path:
    (root / ".acdc").mkdir()
    return root / ".acdc"


async def run(root, data_dir, sandbox, *argv: str):
    return await run_argv(argv, root=root, timeout=120, sandbox=sandbox, data_dir=data_dir)


def groups() -> dict[str, object]:
    """The groups acdc's runs are made under, their children (but other processes' runs)
    and their own settings: what a run must leave as it found them."""
    seen: dict[str, object] = {}
    for _, parent, _ in Place.found().folders:
        ours_or_not_acdc = (
            c.name for c in parent.iterdir() if not c.name.startswith(PREFIX) or _ours(c.name)
        )
        seen[str(parent)] = sorted(ours_or_not_acdc)
        for name in ("pids.max", "memory.limit_in_bytes", "memory.max", "cgroup.subtree_control"):
            if (parent / name).is_file():
                seen[str(parent / name)] = (parent / name).read_text()
    return seen


def _ours(name: str) -> bool:
    return name.startswith(f"{PREFIX}{os.getpid()}-")


async def test_a_run_trying_a_thousand_processes_is_stopped_by_the_process_limit(
    root, data_dir, sandbox
):
    assert Limits.configured().processes == 512
    outcome = await run(root, data_dir, sandbox, PYTHON, "-c", FORKS)
    text = outcome.captured.stored_text()
    assert "refused after" in text and int(text.split("refused after ")[1].split()[0]) < 512
    assert outcome.limit == (
        "it reached the process limit of 512 (ACDC_RUN_MAX_PROCESSES): a new process was refused"
    )
    assert outcome.summary(120).startswith("stopped: it reached the process limit of 512")
    assert text.endswith(f"[acdc] stopped: {outcome.limit}\n")


async def test_a_run_allocating_4_gib_is_stopped_by_the_memory_limit(
    root, data_dir, sandbox, settings
):
    assert Limits.configured().memory_mb == 4096  # 4 GiB by default; 256 MiB to be quick
    settings.ACDC_RUN_MEMORY_MB = 256
    code = "b = bytearray(4 * 1024**3); print('allocated', len(b))"
    outcome = await run(root, data_dir, sandbox, PYTHON, "-c", code)
    assert "allocated" not in outcome.captured.stored_text()
    assert outcome.limit == (
        "it passed the memory limit of 256 MiB (ACDC_RUN_MEMORY_MB) and was killed"
    )
    assert not outcome.passed and outcome.exit_code == 128 + 9  # bubblewrap: killed by 9


async def test_a_run_writing_past_the_file_limit_is_stopped(root, data_dir, sandbox, settings):
    assert Limits.configured().file_mb == 1024
    settings.ACDC_RUN_FILE_MB = 1
    outcome = await run(root, data_dir, sandbox, "sh", "-c", "head -c 2097152 /dev/zero > big")
    assert outcome.limit == (
        "it passed the file size limit of 1 MiB (ACDC_RUN_FILE_MB): a write was refused"
    )
    assert (root / "big").stat().st_size == 1024 * 1024


async def test_a_run_filling_its_private_tmp_is_stopped_by_the_tmp_limit(
    root, data_dir, sandbox, settings
):
    assert Limits.configured().tmp_mb == 1024
    settings.ACDC_RUN_TMP_MB = 2  # two files of 1.5 MB: each under the file limit
    code = "for n in range(2):\n    open(f'/tmp/f{n}', 'wb').write(b'x' * 1_500_000)\n"
    outcome = await run(root, data_dir, sandbox, PYTHON, "-c", code)
    assert outcome.exit_code == 1
    assert outcome.limit == (
        "it filled the private /tmp limit of 2 MiB (ACDC_RUN_TMP_MB) "
        "(/tmp, /dev/shm and its home each)"
    )
    assert b"[acdc] stopped: it filled the private /tmp limit" in outcome.captured.last(4096)


async def test_pytest_passes_in_a_group_of_its_own_that_is_gone_after_it(root, data_dir, sandbox):
    (root / "test_small.py").write_text(
        "import pathlib\n\n"
        "def test_it_runs_in_a_group_acdc_made():\n"
        "    print(pathlib.Path('/proc/self/cgroup').read_text())\n"
        "    assert 1 + 1 == 2\n"
    )
    before = groups()
    assert before, "this machine lets acdc make a cgroup for a run"
    # One a killed acdc left (its pid is past any pid there can be) goes with the next run.
    left = [parent / f"{PREFIX}999999999-0" for _, parent, _ in Place.found().folders]
    for folder in left:
        folder.mkdir()
    outcome = await run(root, data_dir, sandbox, sys.executable, "-m", "pytest", "-q", "-s")
    text = outcome.captured.stored_text()
    assert outcome.passed, text
    made = {line.split(":", 2)[2] for line in text.splitlines() if f"/{PREFIX}" in line}
    assert made and all(_ours(path.rsplit("/", 1)[1]) for path in made)
    assert groups() == before  # its group removed, nothing else changed
    assert not any(folder.exists() for folder in left)


def test_a_timeout_past_the_maximum_is_refused_with_the_setting_named(settings):
    assert declaring.check_timeout(3600) == 3600
    with pytest.raises(DeclarationError) as refused:
        declaring.check_timeout(24 * 3600)
    assert str(refused.value) == (
        "--timeout must be 1 to 3600 seconds: a run may last at most 1 h (ACDC_COMMAND_MAX_TIMEOUT)"
    )
    settings.ACDC_COMMAND_MAX_TIMEOUT = 7200
    assert declaring.check_timeout(7200) == 7200


@pytest.mark.django_db
def test_a_timeout_stored_before_the_maximum_runs_within_it():
    DeclaredCommand.objects.create(repository="/r", name="t", argv=["x"], timeout_seconds=86400)
    found = declaring.find("/r", "t")
    assert found is not None and found.timeout_seconds == 3600


@pytest.mark.django_db
def test_the_commands_part_says_which_limits_hold_here_and_how(served_root, session):
    html = render_to_string("chat/_commands.html", commands_context(session, CommandRuns()))
    pids = Place.found().of("pids")
    assert pids is not None
    assert (
        "Processes: 512 (<code>ACDC_RUN_MAX_PROCESSES</code>) — a cgroup "
        f"(v{pids[1]}) acdc makes for each run under {pids[0]}, removed after it"
    ) in html
    assert "Largest file written: 1 GiB (<code>ACDC_RUN_FILE_MB</code>) — RLIMIT_FSIZE" in html
    assert "Longest timeout: 1 h (<code>ACDC_COMMAND_MAX_TIMEOUT</code>)" in html
    assert "not enforced here" not in html
    # Where no group can be made, as root: memory by RLIMIT_AS, processes not at all.
    nowhere = Place((), "acdc cannot make a cgroup with the pids or memory controller here")
    processes, memory = held_here(Limits.configured(), nowhere)[:2]
    assert memory.how.startswith("RLIMIT_AS") and not processes.holds
    assert processes.how == (
        "not enforced: acdc cannot make a cgroup with the pids or memory controller here, "
        "and acdc runs as root, whom RLIMIT_NPROC does not bind"
    )


async def test_without_a_cgroup_memory_is_bounded_by_rlimit_as_and_named(root):
    group = await RunGroup(Limits(512, 256, 1024), Place((), "no cgroup in this test")).opened()
    code = "b = bytearray(1024**3); print('allocated', len(b))"
    child = await asyncio.create_subprocess_exec(
        PYTHON, "-c", code, stdout=PIPE, stderr=STDOUT, preexec_fn=group.preexec()
    )
    out, _ = await child.communicate()
    await group.close()
    captured = Captured()
    captured.add(out)
    assert b"MemoryError" in out and b"allocated" not in out
    said = group.stopped_by("exited", child.returncode, captured)
    assert said == (
        "it passed the memory limit of 256 MiB (ACDC_RUN_MEMORY_MB) (RLIMIT_AS): "
        "an allocation failed"
    )
