"""Where a command runs: its environment, and the bubblewrap sandbox around it.

The environment is built from an allowlist (`PATH`, `HOME`, `LANG`, `LC_*`, `TERM`, a
virtualenv's variables …) and then loses any name that is acdc's (`ACDC_*`) or says it holds
a secret (KEY, SECRET, TOKEN, PASSWORD …): a provider key never reaches a command, so it
cannot print one into the model's context.

With bubblewrap (`bwrap`) a run sees an allowlist: the system's folders read-only
(`hostview`: /usr, /bin, /lib*, /etc minus its secrets and sockets), the toolchain its
program resolves to read-only (`toolchain`: a virtualenv, pyenv, nvm … prefix) and the
person's extra read paths, the work tree read-write, a private size-capped `/tmp`
(ACDC_RUN_TMP_MB) and an empty writable folder in the home folder's place; not the home
folder, other repositories, the host's /tmp, /run, /var, /srv, /mnt, /media, /opt. Inside the
work tree every `.git` and the protected
configuration files (`chat.repo.protected`) are read-only again; acdc's data folder
(its database, secret key and uploads), every secret-shaped file or folder
(`chat.repo.boundary`; not inside a virtualenv or node_modules, whose files are
third-party), every UNIX socket, and the usual credential files of the home folder where a
toolchain or read path shows them are masked (an empty
read-only folder, or an empty file). The work tree is walked for them before every run.
A run has its own network namespace, joined to the outside only when the command was
declared with network (`netns`, never the host's loopback), its own process namespace
(it cannot see acdc's process or its environment, and everything it started dies with
it), no capabilities (run as root, bubblewrap would otherwise keep them and a mount could
be made writable again), and it dies with acdc. A protected file or hook folder that was
not on the disk has nothing to bind over: one that a run creates is moved out of the work
tree into acdc's data folder when the run ends (`take_out`), and the run says so.
`Sandbox.probe` finds out whether bubblewrap works here at all.
Non-goals: running and bounding the process (`runner`), which runs are allowed (`model_tools`).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from django.conf import settings

from chat.repo import boundary, credentials, protected
from chat.repo.commands.confine import hostview, toolchain
from chat.repo.commands.confine.hostview import HostView

log = logging.getLogger(__name__)
ALLOWED_NAMES = frozenset(
    {
        *("PATH", "HOME", "LANG", "LANGUAGE", "TERM", "COLORTERM", "TZ", "USER", "LOGNAME"),
        *("NO_COLOR", "FORCE_COLOR", "SHELL"),
        # a virtualenv's, conda's and pyenv's own variables
        *("VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT", "CONDA_PREFIX", "CONDA_DEFAULT_ENV"),
        *("CONDA_SHLVL", "CONDA_EXE", "CONDA_PYTHON_EXE", "PYENV_VERSION"),
    }
)
ALLOWED_PREFIXES = ("LC_",)
DENIED_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
# Credential files and folders of the home folder a command has no business reading.
HOME_SECRETS = (
    *(".ssh", ".aws", ".gnupg", ".azure", ".kube", ".docker", ".netrc", ".git-credentials"),
    *(".npmrc", ".pypirc", ".pgpass", ".config/gh", ".config/gcloud", ".config/hub"),
    *(".cargo/credentials.toml", ".cargo/credentials"),
)
MB = 1024 * 1024
PROBE_SECONDS = 10
# Folders the search for secret-shaped files skips (with any virtualenv, by its pyvenv.cfg).
THIRD_PARTY = frozenset(
    {"node_modules", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache"}
    | {".ruff_cache", ".hypothesis", "site-packages"}
)


def denied_name(name: str) -> bool:
    """A variable no command gets, whatever the allowlist says."""
    upper = name.upper()
    return (
        upper.startswith("ACDC_")
        or any(word in upper for word in DENIED_WORDS)
        or credentials.secret_name(name)
    )


def environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a command runs with: the allowlist's names, none of the denied ones."""
    environ = os.environ if environ is None else environ
    return {
        name: value
        for name, value in environ.items()
        if (name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)) and not denied_name(name)
    }


@dataclass(frozen=True)
class Sandbox:
    """Bubblewrap on this machine: its path and version, or why there is none."""

    bwrap: str | None
    version: str = ""
    reason: str = ""

    @property
    def available(self) -> bool:
        return self.bwrap is not None

    @classmethod
    def probe(cls, program: str = "bwrap") -> Sandbox:
        """Whether bubblewrap is installed and may make namespaces here (a container or a
        kernel setting can forbid it); one tiny run of it."""
        path = shutil.which(program)
        if path is None:
            return cls(None, reason=f"{program} (Debian's bubblewrap) is not installed")
        try:
            done = subprocess.run(
                [path, "--ro-bind", "/", "/", "--unshare-pid", "--cap-drop", "ALL", "true"],
                capture_output=True,
                timeout=PROBE_SECONDS,
                check=False,
            )
            version = subprocess.run(
                [path, "--version"], capture_output=True, timeout=PROBE_SECONDS, check=False
            ).stdout.decode(errors="replace")
        except (OSError, subprocess.SubprocessError) as exc:
            return cls(None, reason=f"{path} cannot run: {exc}")
        if done.returncode != 0:
            detail = done.stderr.decode(errors="replace").strip().splitlines()
            return cls(None, reason=f"{path} cannot sandbox here: {detail[-1] if detail else ''}")
        return cls(path, version=version.strip())


@dataclass(frozen=True)
class Confinement:
    """What a run may touch, worked out from the disk just before it starts."""

    root: Path
    read_only: tuple[Path, ...]  # inside the work tree, bound read-only again
    masked_folders: tuple[Path, ...]  # an empty read-only folder in their place
    masked_files: tuple[Path, ...]  # an empty read-only file in their place (or socket)
    host: HostView = field(default_factory=lambda: HostView((), (), (), (), ()))
    toolchain: tuple[Path, ...] = ()  # outside the system and the work tree, read-only
    home: Path | None = None  # an empty writable folder in the person's home's place
    tmp_bytes: int = 1024 * MB  # each private tmpfs (/tmp, the home) is capped so


def confinement(
    root: Path,
    data_dir: Path,
    *,
    floor: tuple[str, ...] = (),
    home: str | None = None,
    argv: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    extra_read: Sequence[Path] = (),
) -> Confinement:
    """The run of `argv` in `root` with `environ` (the run's: its PATH finds the program,
    its HOME is the home folder replaced); `extra_read` are the person's own read paths."""
    root = root.resolve()
    environ = environment() if environ is None else environ
    home = home if home is not None else environ.get("HOME", "")
    gits, folders, files = _walk(root, data_dir.resolve(), floor)
    tools = toolchain.prefixes(argv, root, environ)
    extras = tuple(Path(os.path.abspath(p)) for p in extra_read if os.path.exists(p))
    reads = tuple(dict.fromkeys((*tools, *extras, *_linked_git(root))))
    seen = (root, *reads)
    if data_dir.is_dir() and _under(data_dir.resolve(), seen):
        folders.append(data_dir.resolve())
    for name in HOME_SECRETS if home else ():
        path = Path(home) / name
        if not _under(path, seen) or path.is_symlink():
            continue
        if path.is_dir():
            folders.append(path)
        elif path.is_file():
            files.append(path)
    read_only = (*gits, *protected.existing(root))
    box = Confinement(root, read_only, tuple(folders), tuple(files), hostview.host_view())
    return replace(box, toolchain=reads, home=_private_home(home, root), tmp_bytes=tmp_bytes())


def _linked_git(root: Path) -> tuple[Path, ...]:
    """A linked worktree's git folders (its `.git` file names one in another checkout's
    `.git`, which names the common one), so git works in the run: read-only, like `.git`."""
    try:
        line = (root / ".git").read_text(errors="replace").strip()
    except OSError:  # a folder, or no .git at all
        return ()
    if not line.startswith("gitdir:"):
        return ()
    gitdir = (root / line.removeprefix("gitdir:").strip()).resolve()
    try:
        common = (gitdir / (gitdir / "commondir").read_text().strip()).resolve()
    except OSError:
        return (gitdir,)
    return tuple(p for p in (gitdir, common) if not _under(p, (root,)))


def tmp_bytes() -> int:
    """The cap of a run's private /tmp (and home), from ACDC_RUN_TMP_MB."""
    return int(getattr(settings, "ACDC_RUN_TMP_MB", 1024)) * MB


def _private_home(home: str, root: Path) -> Path | None:
    """The home folder's path, where an empty folder takes its place: not when there is
    none, it is a system folder, or the work tree is it or holds it."""
    if not home or not os.path.isabs(home):
        return None
    path = Path(os.path.normpath(home))
    if path == Path("/") or toolchain.visible(path, root):
        return None
    return path


def _under(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == folder or folder in path.parents for folder in folders)


def _walk(root: Path, data_dir: Path, floor: tuple[str, ...]) -> tuple[list[Path], ...]:
    """Every `.git` of the work tree (submodules too), its secret-shaped folders and
    files and its UNIX sockets: ignored ones too, as git's ignore rules do not hide a
    `.env` from a program. Never looks inside a `.git`, the data folder, a secret folder,
    or a folder of installed dependencies or caches (`THIRD_PARTY`, a virtualenv)."""
    spec = boundary.secret_spec(root, floor)
    gits: list[Path] = []
    folders: list[Path] = []
    files: list[Path] = []
    for folder, names, filenames in os.walk(root):
        here = Path(folder)
        relative = here.relative_to(root).as_posix()
        prefix = "" if relative == "." else relative + "/"
        if ".git" in names or ".git" in filenames:
            gits.append(here / ".git")
        kept = []
        for name in names:
            path, key = here / name, (prefix + name).casefold()
            if name == ".git" or path == data_dir or _third_party(path, name):
                continue
            if spec.test(key) or spec.test(key + "/"):
                folders.append(path)
            else:
                kept.append(name)
        names[:] = kept
        for name in filenames:
            if name != ".git" and spec.test((prefix + name).casefold()):
                target = _target(here / name)
                if target is not None:
                    files.append(target)
            elif hostview.is_socket(here / name):  # a host service's, perhaps
                files.append(here / name)
    return gits, folders, files


def _third_party(path: Path, name: str) -> bool:
    """A folder of installed dependencies or caches: its files are not the person's
    secrets (certifi's `cacert.pem` must stay readable), and it can hold most of a work
    tree's files."""
    return name in THIRD_PARTY or (path / "pyvenv.cfg").is_file()


def _target(path: Path) -> Path | None:
    """A secret-shaped symlink is masked where it points (when that is a file)."""
    if not path.is_symlink():
        return path
    resolved = path.resolve()
    return resolved if resolved.is_file() else None


def bwrap_argv(
    sandbox: Sandbox,
    box: Confinement,
    argv: Sequence[str],
    *,
    network: bool = False,
    empty_file: Path,
) -> list[str]:
    """bubblewrap's whole command line for `argv` in `box` (for reading: a run hands the
    options over by file descriptor, `launch`). `network` is added by `launch`."""
    assert sandbox.bwrap is not None
    return [sandbox.bwrap, *bwrap_options(box, empty_file=empty_file), "--", *argv]


def bwrap_options(box: Confinement, *, empty_file: Path) -> list[str]:
    """bubblewrap's options for `box`, in order: later mounts cover earlier ones, so the
    toolchain and the work tree come after the private /tmp and home that may hold them,
    and every read-only or masked path after what holds it."""
    host = box.host
    options = _pairs("--ro-bind", host.folders)
    for target, path in host.links:
        options += ["--symlink", target, str(path)]
    options += ["--dev", "/dev", "--proc", "/proc"]
    for private in ("/dev/shm", "/tmp", *([str(box.home)] if box.home else [])):
        options += ["--size", str(box.tmp_bytes), "--tmpfs", private]
    options += _pairs("--ro-bind-try", (*box.toolchain, *host.extra_files))
    options += ["--bind", str(box.root), str(box.root)]
    options += _pairs("--ro-bind", box.read_only)
    for folder in (*host.masked_folders, *box.masked_folders):
        options += ["--tmpfs", str(folder), "--remount-ro", str(folder)]
    for file in (*host.masked_files, *box.masked_files):
        options += ["--ro-bind", str(empty_file), str(file)]
    # The root and /dev are tmpfs without a cap: only their mounts are writable.
    options += ["--remount-ro", "/dev", "--remount-ro", "/"]
    options += ["--unshare-net", "--unshare-pid", "--unshare-ipc"]
    options += ["--die-with-parent", "--new-session"]
    options += ["--cap-drop", "ALL", "--chdir", str(box.root)]
    return options


def take_out(guards: Iterable[Path], root: Path, data_dir: Path) -> tuple[str, ...]:
    """Those of `guards` (protected paths absent before a run) that exist now, moved into
    `data_dir`/quarantine (kept, not deleted: the person may want to read them), as
    repo-relative paths."""
    moved: list[str] = []
    into: Path | None = None
    for path in guards:
        if not os.path.lexists(path):
            continue
        relative = path.relative_to(root).as_posix()
        try:
            if into is None:
                (data_dir / "quarantine").mkdir(parents=True, exist_ok=True, mode=0o700)
                stamp = time.strftime("%Y%m%d-%H%M%S-")
                into = Path(tempfile.mkdtemp(prefix=stamp, dir=data_dir / "quarantine"))
            target = into / relative
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            shutil.move(path, target)
        except OSError as exc:
            log.error("a run created the protected %s and it could not be moved: %s", path, exc)
            moved.append(f"{relative} (could not be moved: {exc.strerror or exc})")
            continue
        moved.append(relative)
    return tuple(moved)


def _pairs(flag: str, paths: Iterable[Path]) -> list[str]:
    return [item for path in paths for item in (flag, str(path), str(path))]
