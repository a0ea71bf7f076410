"""What an argv runs as code, read the way the programs read their own options.

`code_kind` names it: "a shell" (`sh`, `bash -lc`, `sudo -s`, `su`), "code given to
python3" (an interpreter's inline code: `python3 -Ic`, `node -p`, `perl -ne`, `ruby -e`,
`php -r`, `lua -e`, `Rscript -e`, `osascript -e`, `deno eval`, an awk program), "a command
line split by env -S", "code given to git -c core.pager" (a git setting or option that
starts a program), a program find names with `-exec {}`, or one xargs reads from its input
or from a file. Wrappers that start the rest of the argv are looked through, with their own
options and operands: env (`-i`, `-u NAME`, `VAR=x`), timeout (options and duration), nice,
nohup, ionice, stdbuf, setsid, taskset, chrt, time, flock, sudo, doas, xargs, and the
commands of find's `-exec`, `-execdir`, `-ok` and `-okdir`. Reading errs towards a label:
an interpreter other than python is labelled for a code flag anywhere in its argv.
Anything else reads as the program it is (a script of the tree is the program it names).
Non-goals: sed's `e` command (a sed script is shown whole, unlabelled), `make` and package
scripts (the files they run are the tree's, as a declared check's are).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "pwsh"}
    | {"powershell", "su", "runuser", "watch"}  # each starts a shell with what follows
)
SPLIT = "a command line split by env -S"
FOUND = "a program named by what find finds"
NAMED_BY_INPUT = "a program named by its input (xargs)"
ARGUMENTS_FROM_FILE = "a program with arguments read from a file (xargs -a)"
# git settings that only change how output looks or who commits: any other `-c` may start
# a program (core.pager, alias.x=!…, core.sshCommand, core.fsmonitor, diff.*.textconv…).
GIT_SAFE_KEYS = frozenset({"user.name", "user.email", "core.quotepath", "core.abbrev"})
GIT_SAFE_SECTIONS = ("color.", "advice.", "init.", "log.")
# Subcommands' options that name a program to start.
GIT_CODE_OPTIONS = MappingProxyType(
    {
        "rebase": ("-x", "--exec"),
        "difftool": ("-x", "--extcmd"),
        "grep": ("-O", "--open-files-in-pager"),
        "archive": ("--exec",),
        "push": ("--receive-pack", "--exec"),
        **dict.fromkeys(("fetch", "pull", "ls-remote"), ("--upload-pack",)),
        "clone": ("--upload-pack", "-u"),
    }
)


@dataclass(frozen=True)
class Inline:
    """An interpreter's inline-code options: `letters` in a short cluster (`-Ic`, `-lne`),
    `valued` letters whose value is the rest of the cluster, `long` options."""

    letters: str
    valued: str = ""
    long: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Wrapper:
    """A program that runs the rest of its argv: options taking a value (`valued` short
    letters, `long` names), `operands` before the program (timeout's duration), options
    that make it a shell (`shell`, `long_shell`) or a split (`split`), and NAME=VALUE
    items it takes before the program (`assignments`)."""

    valued: str = ""
    long: frozenset[str] = frozenset()
    operands: int = 0
    shell: str = ""
    long_shell: frozenset[str] = frozenset()
    split: str = ""
    long_split: frozenset[str] = frozenset()
    assignments: bool = False


_EVAL = frozenset({"--eval", "--print"})
INLINE = MappingProxyType(
    {
        "node": Inline("ep", long=_EVAL),
        "nodejs": Inline("ep", long=_EVAL),
        "bun": Inline("ep", long=_EVAL),
        "perl": Inline("eE", valued="MmIixCDd"),
        "ruby": Inline("e", valued="rICEFiKTWx0"),
        "php": Inline("rRBE", valued="dcfzt"),
        "lua": Inline("e", valued="l"),
        "luajit": Inline("e", valued="lj"),
        "Rscript": Inline("e"),
        "R": Inline("e"),
        "osascript": Inline("e", valued="ls"),
    }
)
PYTHONS = frozenset({"python", "pypy"})
PYTHON_CODE_MODULES = frozenset({"timeit", "pdb"})
AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
_F = frozenset
WRAPPERS = MappingProxyType(
    {
        "env": Wrapper(
            "uCP",
            _F({"--unset", "--chdir"}),
            split="S",
            long_split=_F({"--split-string"}),
            assignments=True,
        ),
        "timeout": Wrapper("ks", _F({"--kill-after", "--signal"}), operands=1),
        "nice": Wrapper("n", _F({"--adjustment"})),
        "nohup": Wrapper(),
        "ionice": Wrapper("cnpPu", _F({"--class", "--classdata", "--pid", "--pgid", "--uid"})),
        "stdbuf": Wrapper("ioe", _F({"--input", "--output", "--error"})),
        "setsid": Wrapper(),
        "taskset": Wrapper(operands=1),
        "chrt": Wrapper("TPD", _F({"--sched-runtime", "--sched-period", "--sched-deadline"}), 1),
        "time": Wrapper("fo", _F({"--format", "--output"})),
        "flock": Wrapper("wE", _F({"--timeout", "--conflict-exit-code"}), 1),
        "sudo": Wrapper(
            "ugpCDrtTUR",
            _F({"--user", "--group", "--prompt", "--chdir", "--role", "--type"}),
            shell="si",
            long_shell=_F({"--shell", "--login"}),
            assignments=True,
        ),
        "doas": Wrapper("uC", shell="s"),
        "xargs": Wrapper(
            "adEILnPs",
            _F({"--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs"})
            | _F({"--max-chars", "--process-slot-var"}),
        ),
    }
)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def code_kind(argv: Sequence[str]) -> str:
    """What `argv` runs as code, in words ("a shell", "code given to python3", …), or ""
    when it runs the program it names and nothing given as text."""
    if not argv:
        return ""
    program = posixpath.basename(argv[0])
    base = re.sub(r"[0-9.]+\Z", "", program) or program
    rest = list(argv[1:])
    if program in SHELLS or base in SHELLS:
        return "a shell"
    if base in PYTHONS:
        return f"code given to {program}" if _python_code(rest) else ""
    if base in INLINE:
        return f"code given to {program}" if _inline(INLINE[base], rest) else ""
    if base in AWKS:
        return f"code given to {program}" if _awk_program(rest) else ""
    if base == "deno":
        return f"code given to {program} eval" if _first_operand(rest) == "eval" else ""
    if base in WRAPPERS:
        return _wrapped(base, rest)
    if base == "find":
        return _find(rest)
    if base == "git":
        return _git(rest)
    return ""


def _python_code(rest: list[str]) -> bool:
    """python's options up to its script or `-m`: `-c`, also last in a cluster (`-Ic`,
    `-Bc`) or with the code attached (`-cprint(1)`); `-X`/`-W` values are skipped."""
    at = 0
    while at < len(rest):
        item = rest[at]
        if item == "--" or not item.startswith("-") or item == "-":
            return False
        if item.startswith("--"):
            at += 2 if item == "--check-hash-based-pycs" else 1
            continue
        for index, letter in enumerate(item[1:], 1):
            if letter == "c":
                return True
            if letter == "m":
                module = item[index + 1 :] or (rest[at + 1] if at + 1 < len(rest) else "")
                return module in PYTHON_CODE_MODULES
            if letter in "XWQ":
                at += 1 if index == len(item) - 1 else 0  # the value is the next item
                break
        at += 1
    return False


def _inline(form: Inline, rest: list[str]) -> bool:
    for item in rest:
        if item.split("=", 1)[0] in form.long:
            return True
        if item.startswith("-") and not item.startswith("--"):
            for letter in item[1:]:
                if letter in form.letters:
                    return True
                if letter in form.valued:
                    break
    return False


def _awk_program(rest: list[str]) -> bool:
    """An awk given its program as text: `-e`/`--source`, or an operand with no `-f`."""
    from_file, at = False, 0
    while at < len(rest):
        item = rest[at]
        name = item.split("=", 1)[0]
        if item in ("-e", "--source") or name == "--source" or item.startswith("-e"):
            return True
        if item == "--":
            at += 1
            break
        if not item.startswith("-") or item == "-":
            break
        from_file = from_file or item.startswith(("-f", "-E", "--file", "--exec"))
        separate = item in ("-F", "-v", "-f", "-i", "-l", "-E", "-W") or (
            item.startswith("--") and "=" not in item and item not in ("--posix", "--lint")
        )
        at += 2 if separate else 1
    return not from_file and at < len(rest)


def _first_operand(rest: list[str]) -> str:
    return next((item for item in rest if not item.startswith("-")), "")


def _options(form: Wrapper, rest: list[str]) -> tuple[list[tuple[str, str]], list[str]] | str:
    """The wrapper's options as (name, value) and the argv it runs; a label instead when
    an option makes it a shell or a split."""
    found: list[tuple[str, str]] = []
    at = 0
    while at < len(rest):
        item, after = rest[at], rest[at + 1] if at + 1 < len(rest) else ""
        if item == "--":
            at += 1
            break
        if item.startswith("--"):
            name, equals, value = item.partition("=")
            if name in form.long_shell:
                return "a shell"
            if name in form.long_split:
                return SPLIT
            if name in form.long and not equals:
                value, at = after, at + 1
            found.append((name, value))
        elif item.startswith("-") and len(item) > 1:
            label, took_next = _cluster(form, item, after, found)
            if label:
                return label
            at += took_next
        elif not (form.assignments and _ASSIGNMENT.match(item)):
            break
        at += 1
    return found, rest[at + form.operands :]


def _cluster(form: Wrapper, item: str, after: str, found: list) -> tuple[str, bool]:
    """One short-option cluster (`-iu NAME`, `-n5`): a label, or whether its value was
    the next item."""
    for index, letter in enumerate(item[1:], 1):
        if letter in form.shell:
            return "a shell", False
        if letter in form.split:
            return SPLIT, False
        if letter in form.valued:
            attached = item[index + 1 :]
            found.append((f"-{letter}", attached or after))
            return "", not attached
        found.append((f"-{letter}", ""))
    return "", False


def _wrapped(base: str, rest: list[str]) -> str:
    if base == "flock" and any(a == "-c" or a.startswith("--command") for a in rest):
        return "a shell"  # its -c may come after the lock file
    parsed = _options(WRAPPERS[base], rest)
    if isinstance(parsed, str):
        return parsed
    found, program = parsed
    if base != "xargs":
        return code_kind(program)
    if not program:
        return ""  # echo
    names = dict(found)
    replace = names.get("-I") or ("{}" if "-i" in names or "--replace" in names else "")
    replace = names.get("--replace") or replace
    if replace and replace in program[0]:
        return NAMED_BY_INPUT
    inner = code_kind(program)
    if inner or not ("-a" in names or "--arg-file" in names):
        return inner
    return ARGUMENTS_FROM_FILE


def _find(rest: list[str]) -> str:
    for at, item in enumerate(rest):
        if item not in ("-exec", "-execdir", "-ok", "-okdir"):
            continue
        command = []
        for part in rest[at + 1 :]:
            if part in (";", "+"):
                break
            command.append(part)
        if command and "{}" in command[0]:
            return FOUND
        if label := code_kind(command):
            return label
    return ""


def _git(rest: list[str]) -> str:
    at = 0
    while at < len(rest):
        item = rest[at]
        if item in ("-c", "--config-env") and at + 1 < len(rest):
            if not _git_safe(rest[at + 1]):
                return f"code given to git {item} {rest[at + 1].partition('=')[0]}"
            at += 2
        elif item.startswith(("--config-env=", "--exec-path=")):
            return f"code given to git {item.partition('=')[0]}"
        elif item in ("-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix"):
            at += 2
        elif item.startswith("-"):
            at += 1
        else:
            return _git_command(rest[at:])
    return ""


def _git_safe(setting: str) -> bool:
    key = setting.partition("=")[0].lower()
    return key in GIT_SAFE_KEYS or key.startswith(GIT_SAFE_SECTIONS)


def _git_command(words: list[str]) -> str:
    """git subcommands that start a program named in their arguments."""
    command, args = words[0], words[1:]
    runs = (
        command == "filter-branch"
        or (command == "bisect" and args[:1] == ["run"])
        or (command == "submodule" and "foreach" in args)
        or any(a.startswith(GIT_CODE_OPTIONS.get(command, ())) for a in args)
    )
    return f"code given to git {command}" if runs else ""
