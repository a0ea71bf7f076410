"""What a sandboxed run can see and reach, with real bubblewrap, slirp4netns and sockets.

No host UNIX socket (under /run, the host's /tmp, the home folder, in the work tree), no
file of the home folder or of a sibling repository, no /etc/shadow; no new UNIX socket at
all, while socketpair and asyncio work; /tmp and /dev/shm capped by ACDC_RUN_TMP_MB,
bubblewrap's root and /dev read-only; with network, an interface of its own and not the
host's loopback; bubblewrap's command line names no
masked path; a real pytest run passes, with a virtualenv in the tree and acdc's own
(a toolchain outside it); git in a linked worktree; a declared read path (`--read`). The
program's toolchain is found on a synthetic pyenv prefix.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async

from acdc.cli import parse_args
from chat.repo.commands import declaring
from chat.repo.commands.confine import toolchain
from chat.repo.commands.runner import CommandRuns, run_argv
from chat.repo.commands.sandbox import Sandbox, environment
from tests.chat.repo.commands_support import PYTHON, Listener, pids_with


@pytest.fixture
def sandbox() -> Sandbox:
    found = Sandbox.probe()
    assert found.available, f"bubblewrap is needed (make test installs it): {found.reason}"
    return found


async def sandboxed(root: Path, sandbox: Sandbox, *argv: str, network=False, **kwargs):
    outcome = await run_argv(
        argv,
        root=root,
        timeout=120,
        sandbox=sandbox,
        network=network,
        data_dir=root.parent / "data",
        **kwargs,
    )
    return outcome, outcome.captured.stored_text()


@contextlib.contextmanager
def unix_listener(path: Path):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)
    server.setblocking(False)
    try:
        yield server
    finally:
        server.close()


def came(server: socket.socket) -> bool:
    try:
        server.accept()[0].close()
    except BlockingIOError:
        return False
    return True


PROBE = """
import os, socket, stat, sys
for path in sys.argv[1:5]:
    kind = 'absent' if not os.path.exists(path) else 'socket'
    if kind != 'absent' and not stat.S_ISSOCK(os.stat(path).st_mode):
        kind = 'file'
    try:
        client = socket.socket(socket.AF_UNIX)
        client.connect(path)
        print('CONNECTED', path)
    except OSError as exc:
        print('no', path, kind, exc.strerror)
for path in sys.argv[5:]:
    try:
        print('READ', path, repr(open(path).read()))
    except OSError as exc:
        print('unread', path, exc.strerror)
home = os.environ['HOME']
os.makedirs(home + '/.cache/tool')
open(home + '/.cache/tool/x', 'w').write('a cache')
print('home', sorted(os.listdir(home)))
"""


async def test_no_host_socket_home_file_sibling_repository_or_shadow(root, sandbox, tmp_path):
    home, sibling = tmp_path / "home", tmp_path / "sibling"
    home.mkdir()
    sibling.mkdir()
    (home / "canary").write_text("HOME CANARY")
    (sibling / ".env").write_text("SIBLING CANARY")
    run_dir = Path(tempfile.mkdtemp(dir="/run", prefix="acdc-test-"))
    paths = [run_dir / "s", tmp_path / "host.sock", home / "agent.sock", root / "service.sock"]
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(unix_listener(path)) for path in paths]
        stack.callback(lambda: [p.unlink() for p in paths] and run_dir.rmdir())
        environ = {**environment(), "HOME": str(home)}
        reads = [home / "canary", sibling / ".env", Path("/etc/shadow")]
        argv = (PYTHON, "-c", PROBE, *map(str, paths), *map(str, reads))
        outcome, text = await sandboxed(root, sandbox, *argv, environ=environ)
        assert outcome.passed, text
        assert "CONNECTED" not in text and not any(came(server) for server in servers)
    for path in paths[:3]:  # not there at all; the work tree's is an empty file
        assert f"no {path} absent" in text
    assert f"no {paths[3]} file" in text
    assert "HOME CANARY" not in text and "SIBLING CANARY" not in text
    assert "READ /etc/shadow ''" in text and f"unread {home / 'canary'}" in text
    assert "home ['.cache']" in text  # an empty, writable home folder of its own
    assert not (home / ".cache").exists()


SOCKETS = """
import asyncio, socket
try:
    socket.socket(socket.AF_UNIX)
    print('made a UNIX socket')
except OSError as exc:
    print('AF_UNIX:', exc.strerror)
one, two = socket.socketpair()
one.send(b'pair works')
print(two.recv(20).decode())

async def main():
    reader, writer = await asyncio.open_connection(sock=one)
    return 'asyncio works'

print(asyncio.run(main()))
"""


async def test_no_unix_socket_can_be_made_but_socketpair_and_asyncio_work(root, sandbox, settings):
    settings.ACDC_RUN_TMP_MB = 1
    outcome, text = await sandboxed(root, sandbox, PYTHON, "-c", SOCKETS)
    assert outcome.passed, text
    assert "AF_UNIX: Operation not permitted" in text
    assert "pair works" in text and "asyncio works" in text
    script = "for f in /tmp/big /dev/shm/big; do head -c 2000000 /dev/zero > $f; done; "
    script += "echo x > /stray; echo y > /dev/stray; head -c 1000 /dev/zero > small"
    _, text = await sandboxed(root, sandbox, "sh", "-c", script)
    assert text.count("No space left on device") == 2, text  # /tmp and /dev/shm
    assert text.count("Read-only file system") == 2  # bubblewrap's own root and /dev
    assert (root / "small").stat().st_size == 1000


NETWORK = """
import socket, sys
print(open('/proc/net/route').read())
print(open('/etc/resolv.conf').read())
for host in ('127.0.0.1', '10.0.2.2'):
    try:
        socket.create_connection((host, int(sys.argv[1])), timeout=20).close()
        print('CONNECTED', host)
    except OSError as exc:
        print('no', host, exc)
"""


async def test_a_network_run_has_its_own_interface_and_not_the_hosts_loopback(root, sandbox):
    listener = Listener()
    try:
        argv = (PYTHON, "-c", NETWORK, str(listener.port))
        outcome, text = await sandboxed(root, sandbox, *argv, network=True)
        assert outcome.passed, text
        assert not listener.connected()
    finally:
        listener.close()
    assert "CONNECTED" not in text
    routes = [line.split() for line in text.splitlines() if line.startswith("tap0")]
    assert any(route[1] == "00000000" for route in routes), text  # its default route
    assert "nameserver 10.0.2.3" in text


async def test_bubblewraps_command_line_names_no_masked_path(root, sandbox):
    (root / ".env").write_text("KEY=1\n")
    word = f"acdc-cmdline-{os.getpid()}-{id(root)}"
    script = f": {word}; tr '\\0' ' ' < /proc/1/cmdline; echo; echo started; "
    script += "while [ ! -e done ]; do sleep 0.05; done"
    seen: list[bytes] = []

    async def on_output(chunk: bytes) -> None:
        if b"started" in chunk and not seen:
            seen.extend(Path(f"/proc/{pid}/cmdline").read_bytes() for pid in pids_with(word))
            (root / "done").touch()

    outcome, text = await sandboxed(root, sandbox, "sh", "-c", script, on_output=on_output)
    assert outcome.passed, text
    bwraps = [line.split(b"\0") for line in seen if line.startswith(sandbox.bwrap.encode())]
    assert bwraps and all(words[1:4] == [b"--args", words[2], b"--"] for words in bwraps)
    assert not any(str(root / ".env").encode() in line for line in seen)
    assert str(root / ".env") not in text and "--args" in text


async def test_pytest_passes_with_a_venv_in_the_tree_and_acdcs_own(root, sandbox):
    (root / "tests").mkdir()
    (root / "tests" / "test_it.py").write_text("import json\n\ndef test_it():\n    assert 1\n")
    _, text = await sandboxed(root, sandbox, PYTHON, "-m", "venv", "--without-pip", "venv")
    outcome, text = await sandboxed(root, sandbox, "venv/bin/python", "-c", "import json")
    assert outcome.passed, text
    pytest_argv = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
    outcome, text = await sandboxed(root, sandbox, *pytest_argv)
    assert outcome.passed and "1 passed" in text, text


def test_the_toolchain_is_the_prefix_the_program_resolves_to(tmp_path):
    home = tmp_path / "home"
    prefix = home / ".pyenv" / "versions" / "3.99.0"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "python3.99").write_text("")
    (prefix / "bin" / "python3.99").chmod(0o755)
    (prefix / "bin" / "python").symlink_to("python3.99")
    venv, tree = tmp_path / "elsewhere" / "venv", tmp_path / "repo"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {prefix / 'bin'}\n")
    (venv / "bin" / "python").symlink_to(prefix / "bin" / "python")
    (home / "bin").mkdir()
    (home / "bin" / "tool").write_text(f"#!{venv / 'bin' / 'python'}\n")
    (home / "bin" / "tool").chmod(0o755)
    environ = {"PATH": f"{home / 'bin'}:/usr/bin", "HOME": str(home)}
    assert toolchain.prefixes(["python3"], tree, environ) == ()  # the system's
    assert toolchain.prefixes([str(venv / "bin" / "python")], tree, environ) == (venv, prefix)
    # A program in ~/bin: its folder, not the home folder; its #! brings the venv.
    found = toolchain.prefixes(["sh", "-c", "cd x && tool -q | cat"], tree, environ)
    assert found == (home / "bin", venv, prefix)


async def test_git_works_in_a_linked_worktree_and_its_folders_stay_read_only(sandbox, tmp_path):
    main, linked = tmp_path / "main", tmp_path / "linked"
    git = ("git", "-c", "user.email=a@b.c", "-c", "user.name=A", "-C", str(main))
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "one"], check=True)
    subprocess.run([*git, "worktree", "add", "-q", str(linked)], check=True)
    script = "git log --format=%s; touch ../main/.git/planted"
    outcome, text = await sandboxed(linked, sandbox, "sh", "-c", script)
    assert text.startswith("one\n"), text
    assert "Read-only file system" in text and not (main / ".git" / "planted").exists()


@pytest.mark.django_db(transaction=True)
async def test_a_declared_read_path_is_seen_and_nothing_beside_it(root, sandbox, tmp_path, session):
    shared, beside = tmp_path / "datasets", tmp_path / "private"
    for folder, word in ((shared, "SHARED"), (beside, "BESIDE")):
        folder.mkdir()
        (folder / "canary.txt").write_text(f"{word} CANARY")
    with pytest.raises(declaring.DeclarationError, match="absolute path"):
        await sync_to_async(declaring.add)(str(root), "rel", ["true"], read_paths=["data"])
    argv = ["cat", str(shared / "canary.txt"), str(beside / "canary.txt")]
    command = await sync_to_async(declaring.add)(str(root), "read", argv, read_paths=[str(shared)])
    outcome = await CommandRuns(sandbox).run_declared(session, command, root)
    text = outcome.captured.stored_text()
    assert "SHARED CANARY" in text and "BESIDE CANARY" not in text
    assert "No such file or directory" in text
    args = parse_args(["commands", "add", "read", "--read", "/a", "--read", "/b", "--", "ls"])
    assert args.read == ["/a", "/b"] and args.argv == ["ls"]
