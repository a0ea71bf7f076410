"""The launcher of a stdio MCP server declared with `--network`: bubblewrap as a command
declared with network runs it, with its own user-mode network (`confine.netns`).

The SDK starts a stdio server as one program with its pipes and cannot hand bubblewrap the
descriptors a network run needs (its options, seccomp filter, --info-fd, --block-fd), so it
starts this file instead, on the host: it reads what to run from the file acdc wrote in the
run's private scratch folder (a pickle of the sandbox, the confinement, the argv and the
empty file, written by acdc itself), starts bubblewrap through `confine.launch` with the
server's stdin and stdout as its own, attaches slirp4netns (never the host's loopback), and
ends with bubblewrap's exit status. bubblewrap dies with it (--die-with-parent), and it
with acdc: it stops when its stdin closes, as the server does.
Non-goals: the confinement itself (`commands.sandbox`), the MCP session (`client`).
"""

from __future__ import annotations

import asyncio
import pickle
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file by the SDK: acdc's source is three levels up
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from chat.repo.commands.confine import launch  # noqa: E402


def write_order(scratch: Path, order: tuple) -> Path:
    """The launch order in the run's scratch folder (private to acdc), for `main`."""
    path = scratch / "launch.pickle"
    path.write_bytes(pickle.dumps(order))
    path.chmod(0o600)
    return path


async def _run(order_path: Path) -> int:
    sandbox, box, argv, empty_file = pickle.loads(order_path.read_bytes())
    try:
        started = launch.prepare(sandbox, box, argv, network=True, empty_file=empty_file)
    except launch.NetworkError as exc:
        print(f"acdc: {exc}", file=sys.stderr, flush=True)
        return 126
    process = await asyncio.create_subprocess_exec(*started.command, pass_fds=started.fds)
    try:
        await started.started()
    except launch.NetworkError as exc:
        print(f"acdc: {exc}", file=sys.stderr, flush=True)
        process.kill()
        await process.wait()
        await started.close()
        return 126
    try:
        return await process.wait()
    finally:
        await started.close()


def main(argv: list[str]) -> int:
    return asyncio.run(_run(Path(argv[1])))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
