"""Typed readers for settings that come from the environment.

Each helper returns a clean Python value or raises `ImproperlyConfigured` with a one-line
message naming the variable, so a typo in the environment is an error the user can act
on, never a traceback deep inside the app.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from types import MappingProxyType

from django.core.exceptions import ImproperlyConfigured
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = env_str(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {value}")
    return value


def env_bool(name: str, default: bool = False) -> bool:
    raw = env_str(name).lower()
    if not raw:
        return default
    if raw in {"1", "true", "yes", "on"}:
        return True
    if raw in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {raw!r}")


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    raw = env_str(name).lower() or default
    if raw not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, not {raw!r}")
    return raw


def env_directory(name: str, default: Path) -> Path:
    """A directory that must already exist."""
    raw = env_str(name)
    path = Path(raw).expanduser() if raw else default
    if not path.exists():
        raise ImproperlyConfigured(f"{name}: {path} does not exist")
    if not path.is_dir():
        raise ImproperlyConfigured(f"{name}: {path} is not a directory")
    return path.resolve()


def env_url(name: str, schemes: tuple[str, ...]) -> str:
    raw = env_str(name)
    if raw and not raw.startswith(tuple(f"{s}://" for s in schemes)):
        wanted = " or ".join(f"{s}://" for s in schemes)
        raise ImproperlyConfigured(f"{name} must start with {wanted}, not {raw[:40]!r}")
    return raw


def env_bind_address(name: str, default: str = "127.0.0.1") -> str:
    raw = env_str(name) or default
    if raw == "localhost":
        return "127.0.0.1"
    try:
        ipaddress.ip_address(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an IP address, not {raw!r}") from None
    return raw


def is_loopback(address: str) -> bool:
    return ipaddress.ip_address(address).is_loopback


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def env_allowed_hosts(name: str, bind: str) -> list[str]:
    """ALLOWED_HOSTS: the names a browser may use for the bind address, plus `name`'s
    comma-separated host names (Django's patterns: `.example.com` takes subdomains too).

    A loopback or wildcard bind answers on loopback; a wildcard bind answers on every
    address of the machine too, which only the user can name (a DNS name acdc cannot know).
    """
    address = ipaddress.ip_address(bind)
    hosts = [f"[{bind}]" if address.version == 6 else bind]
    if address.is_loopback or address.is_unspecified:
        hosts = [*LOOPBACK_HOSTS, *hosts]
    for item in filter(None, (part.strip().lower() for part in env_str(name).split(","))):
        outside_brackets = item.rpartition("]")[2] if item.startswith("[") else item
        if "/" in item or ":" in outside_brackets:
            raise ImproperlyConfigured(
                f"{name} takes host names without scheme or port (example.com,.example.org), "
                f"not {item[:60]!r}"
            )
        hosts.append(item)
    return list(dict.fromkeys(hosts))


def env_mounts(name: str) -> tuple[tuple[str, str], ...]:
    """`AGENT=CANONICAL[,AGENT=CANONICAL…]`: absolute path prefixes (seed 001 §5.3)."""
    pairs = []
    for item in filter(None, (part.strip() for part in env_str(name).split(","))):
        agent, sep, canonical = item.partition("=")
        if not sep or not agent.startswith("/") or not canonical.startswith("/"):
            raise ImproperlyConfigured(
                f"{name} takes AGENT=CANONICAL pairs of absolute paths, not {item[:60]!r}"
            )
        pairs.append((agent, canonical))
    return tuple(pairs)


def env_repo_paths(name: str) -> tuple[str, ...]:
    """Comma-separated paths from the repository root, as .gitignore anchors them
    (`/tools/`, `tools/run.sh`): "/"-separated, without the slashes around them. No
    wildcards and no `..`: each must name one file or folder acdc can bind and move."""
    paths = []
    for item in filter(None, (part.strip() for part in env_str(name).split(","))):
        path = item.strip("/")
        parts = path.split("/")
        if not path or any(c in path for c in "*?[\\") or ".." in parts or "." in parts:
            raise ImproperlyConfigured(
                f"{name} takes paths from the repository root (.vscode/,tools/run.sh), "
                f"without wildcards or '..', not {item[:60]!r}"
            )
        paths.append(path)
    return tuple(dict.fromkeys(paths))


# channels-redis waits for messages with a blocking pop of up to 5 s, so a live connection
# answers at least that often. No read timeout on top: redis-py 8's default (5 s) ends that
# wait with a TimeoutError and drops the websocket every few seconds, and any read timeout
# (asyncio.timeout on Python 3.11) can swallow the cancel of a closing tab's receive, which
# then holds the worker's receive lock and never ends. TCP keepalive notices a dead peer. A
# short connect timeout: while Redis is down (its host gone, not only its port closed) a
# frame, a tab's join or a stopping worker waits seconds at most, not the kernel's minutes.
REDIS_HOST_OPTIONS = MappingProxyType(
    {"socket_timeout": None, "socket_keepalive": True, "socket_connect_timeout": 2.0}
)


def channel_layers(redis_url: str) -> dict:
    """CHANNEL_LAYERS: Redis when a URL is given (several workers), else in memory.

    A pooled connection that Redis closed (it was killed or restarted) fails once when next
    used; redis-py would raise that to the caller, so after Redis came back every pooled
    connection cost a tab or a frame once. Each command is tried once more on a fresh
    connection instead: the stale one is dropped, and a Redis still down fails at once."""
    if not redis_url:
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    host = {"address": redis_url, **REDIS_HOST_OPTIONS, "retry": Retry(NoBackoff(), 1)}
    return {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [host], "capacity": 1500},
        }
    }
