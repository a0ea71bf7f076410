"""What a run sees of the machine itself: the system's folders, read-only, minus /etc's
secrets and any socket among them.

The system folders (`toolchain.SYSTEM`) that exist are bound read-only at their own path; one
that is a symlink (`/bin` → `usr/bin` on a merged-/usr system) is made the same symlink.
In /etc every entry other users may not read (`/etc/shadow`, `gshadow`, `sudoers`, ssh host
keys, `ssl/private`, a database's password file …) is masked, with the usual names masked
whatever their mode, and so is any UNIX socket found there. /etc/resolv.conf that links
into /run (systemd-resolved) is bound at its target, as a file, since /run is not there.
Nothing else of the host's: no /home, /root, /run, /var, /srv, /mnt, /media, /opt, /sys, no
host /tmp; /dev and /proc are bubblewrap's own (a few device nodes; the run's processes).
Non-goals: the work tree and the toolchain (`sandbox`, `toolchain`).
"""

from __future__ import annotations

import glob
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from chat.repo.commands.confine.toolchain import SYSTEM

ETC = Path("/etc")
# Masked whatever their mode says (on a machine where someone loosened it).
ETC_SECRETS = (
    *("shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d", "ssl/private"),
    *("security/opasswd", "krb5.keytab", "ipsec.secrets", "NetworkManager/system-connections"),
    *("mysql/debian.cnf", "letsencrypt", "ppp/chap-secrets", "ppp/pap-secrets"),
)


@dataclass(frozen=True)
class HostView:
    """The system part of a run's filesystem."""

    folders: tuple[Path, ...]  # bound read-only
    links: tuple[tuple[str, Path], ...]  # (target, path): made as symlinks
    masked_folders: tuple[Path, ...]
    masked_files: tuple[Path, ...]  # files and sockets
    extra_files: tuple[Path, ...]  # bound read-only: what /etc links to elsewhere


def host_view(etc: Path = ETC) -> HostView:
    folders: list[Path] = []
    links: list[tuple[str, Path]] = []
    for name in SYSTEM:
        path = Path(name)
        if path.is_symlink():
            links.append((os.readlink(path), path))
        elif path.is_dir():
            folders.append(path)
    masked_folders, masked_files = _etc_secrets(etc)
    resolv = etc / "resolv.conf"
    extra = []
    if resolv.is_symlink() and resolv.is_file():
        target = resolv.resolve()
        if not any(target.is_relative_to(folder) for folder in SYSTEM):
            extra.append(target)
    return HostView(tuple(folders), tuple(links), masked_folders, masked_files, tuple(extra))


def _etc_secrets(etc: Path) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """/etc's entries others may not read, its known secrets, and its sockets."""
    folders: set[Path] = set()
    files: set[Path] = set()
    named = [etc / name for name in ETC_SECRETS]
    named += [Path(p) for p in glob.glob(str(etc / "ssh" / "ssh_host_*_key"))]
    for path in named:
        if path.is_dir() and not path.is_symlink():
            folders.add(path)
        elif os.path.lexists(path) and not path.is_symlink():
            files.add(path)
    for folder, names, filenames in os.walk(etc):
        here = Path(folder)
        kept = []
        for name in names:
            path = here / name
            if path in folders or _private(path):
                folders.add(path)
            else:
                kept.append(name)
        names[:] = kept
        for name in filenames:
            path = here / name
            if _private(path) or is_socket(path):
                files.add(path)
    return tuple(sorted(folders)), tuple(sorted(files - _inside(files, folders)))


def _private(path: Path) -> bool:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISLNK(mode) and not mode & stat.S_IROTH


def is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except OSError:
        return False


def _inside(files: set[Path], folders: set[Path]) -> set[Path]:
    return {file for file in files if any(folder in file.parents for folder in folders)}
