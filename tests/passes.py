"""The suite's passes (loaded with -p): which tests the PostgreSQL + Redis pass runs again.

`.ci/run` runs every test on the embedded default (SQLite, the in-memory channel layer),
then again with `ACDC_TEST_PASS=scale-out` on PostgreSQL and Redis. That second pass keeps
only the tests whose behaviour can differ there, decided by what each test uses, never by a
list of files:
- a database: pytest-django's `django_db` marker, or a fixture that opens one (`db`,
  `client`, `live_server`, ...);
- a channel layer: its code reaches `channels` (a websocket communicator, the layer itself)
  or `chat.live` (the consumer, the turn host, which send to groups);
- an `acdc` process (it reads DATABASE_URL and REDIS_URL): its code, or a fixture's, runs
  `python -m acdc`, and it is no browser test (below);
- a browser journey across tabs or processes: a browser test whose own code opens a second
  page, or runs `acdc` beside the page. The other browser tests' subject is the page; what
  differs under it by database or layer is tested at the view and consumer level, in this
  pass, at a fraction of a browser's cost.
"What the code reaches" follows the names a test function and its fixtures use, through
the functions of `tests` and `bench` they name, a few calls deep. The terminal summary says
how many were left out and why.

Under pytest-xdist (`make test` runs `-n 2 --dist loadgroup` when it is installed) every
browser test is in one group, `browser`, so one worker drives Chromium while the other runs
the rest test by test (the group is the largest unit, so it is handed out first); each
Chromium and its server is heavy on two cores. The workers collect and choose; the summary
line is the first worker's count, sent back to the controller.
"""

from __future__ import annotations

import inspect
import os
import re
import types
from collections import Counter
from collections.abc import Iterator

import pytest

PASS = "ACDC_TEST_PASS"
SCALE_OUT = "scale-out"
DATABASE_FIXTURES = frozenset(
    {
        "db",
        "transactional_db",
        "django_db_setup",
        "django_db_reset_sequences",
        "django_db_serialized_rollback",
        "client",
        "async_client",
        "admin_client",
        "admin_user",
        "django_user_model",
        "live_server",
    }
)
FOLLOWED = ("tests.", "bench.")  # packages whose functions are followed into
# What sends to or reads a channel layer: channels itself (the layer, the communicators,
# the ASGI router) and the parts of chat that send to groups.
LAYER_USERS = (
    "channels.",
    "chat.live.consumers",
    "chat.live.turnhost",
    "chat.live.keepwarm",
    "chat.live.presence",
    "chat.web.broadcast",
)
RUNS_ACDC = re.compile(r'"-m",\s*"acdc"|-m acdc\b')
DEPTH = 4
REASONS = pytest.StashKey[Counter]()
BROWSER_GROUP = pytest.mark.xdist_group("browser")


# xdist's own hook (registered after this plugin, so called before its untagged ones) reads
# the groups: this one is tryfirst, after tests/e2e's tryfirst one, which marks the tests.
@pytest.hookimpl(tryfirst=True, specname="pytest_collection_modifyitems")
def pytest_collection_modifyitems_browser_group(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("browser"):
            item.add_marker(BROWSER_GROUP)


@pytest.hookimpl(trylast=True)  # after the conftests' own (tests/e2e marks its tests)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get(PASS) != SCALE_OUT:
        return
    kept, left, why = [], [], Counter()
    for item in items:
        reason = why_it_differs(item)
        why[reason or "left out"] += 1
        (kept if reason else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept
    config.stash[REASONS] = why
    if hasattr(config, "workeroutput"):  # an xdist worker: the controller prints the line
        config.workeroutput[PASS] = dict(why)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: in the controller, as a worker ends
def pytest_testnodedown(node, error) -> None:
    counts = getattr(node, "workeroutput", {}).get(PASS)
    if counts is not None and REASONS not in node.config.stash:
        node.config.stash[REASONS] = Counter(counts)


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    if REASONS not in config.stash:
        return
    why = config.stash[REASONS]
    left = why.pop("left out", 0)
    kept = ", ".join(f"{count} {reason}" for reason, count in why.most_common())
    terminalreporter.write_line(
        f"{SCALE_OUT} pass (tests/passes.py): {left} tests left out, as they use no database, "
        f"channel layer, acdc process or browser journey across tabs or processes; kept by "
        f"what they use: {kept or 'none'}"
    )


def why_it_differs(item: pytest.Item) -> str:
    """What `item` uses that can differ by database or channel layer ("" when nothing)."""
    if item.get_closest_marker("sqlite_file"):  # its subject is the SQLite file itself
        return ""
    if item.get_closest_marker("django_db") or DATABASE_FIXTURES & set(item.fixturenames):
        return "database"
    if item.get_closest_marker("browser"):  # its fixtures open the first page
        own = [obj for obj in _reached([getattr(item, "function", None)]) if _followed(obj)]
        if any("new_page" in _names(obj) for obj in own):
            return "cross-tab journey"
        return "cross-process journey" if any(_runs_acdc(obj) for obj in own) else ""
    reached = list(_reached(_entry_points(item)))
    ours = [obj for obj in reached if _followed(obj)]
    if any(_module_of(obj).startswith(LAYER_USERS) for obj in reached):
        return "channel layer"
    return "acdc process" if any(_runs_acdc(obj) for obj in ours) else ""


def _entry_points(item: pytest.Item) -> list[object]:
    """The test function and the functions of the fixtures it uses."""
    found = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    for definitions in info.name2fixturedefs.values() if info else ():
        found.extend(definition.func for definition in definitions)
    return [obj for obj in found if obj is not None]


def _reached(start: list[object]) -> Iterator[object]:
    """Every object the entry points name, following functions and classes of FOLLOWED
    packages `DEPTH` levels deep (each object once)."""
    seen: set[int] = set()
    level = start
    for _ in range(DEPTH):
        following = []
        for obj in level:
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            yield obj
            if _followed(obj):
                following.extend(_named_by(obj))
        level = following


def _named_by(obj: object) -> Iterator[object]:
    """The globals (and attributes of modules) a function's or class's code names, and a
    class's bases."""
    yield from (base for base in getattr(obj, "__bases__", ()) if base is not object)
    for function in _functions(obj):
        names = _names(function)
        space = getattr(function, "__globals__", {})
        for name in names:
            value = space.get(name)
            if isinstance(value, types.ModuleType):
                yield from (getattr(value, n) for n in names if hasattr(value, n))
            elif value is not None and _module_of(value).startswith(FOLLOWED + LAYER_USERS):
                yield value


def _functions(obj: object) -> list[types.FunctionType]:
    """A function's own (a method's, a wrapped one's), or a class's methods."""
    if isinstance(obj, type):
        return [inspect.unwrap(v) for v in vars(obj).values() if inspect.isfunction(v)]
    function = inspect.unwrap(getattr(obj, "__func__", obj))
    return [function] if inspect.isfunction(function) else []


def _followed(obj: object) -> bool:
    """A function or class of the FOLLOWED packages (a test, a fixture, a helper)."""
    return bool(_functions(obj)) and _module_of(obj).startswith(FOLLOWED)


def _names(obj: object) -> set[str]:
    """The global and attribute names a function's code uses, nested functions included."""
    found: set[str] = set()
    for function in _functions(obj):
        codes = [function.__code__]
        while codes:
            code = codes.pop()
            found.update(code.co_names)
            codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return found


def _runs_acdc(obj: object) -> bool:
    """Whether a function's source runs `python -m acdc` (a class's does not count: its
    methods are reached one by one)."""
    if isinstance(obj, type):
        return False
    try:
        source = "\n".join(inspect.getsource(f) for f in _functions(obj))
    except (OSError, TypeError):
        return False
    return bool(RUNS_ACDC.search(source))


def _module_of(obj: object) -> str:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return getattr(obj, "__module__", None) or ""
