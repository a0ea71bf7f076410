"""Django settings, all read from the environment (docs/settings.md lists every variable).

Embedded default: SQLite in WAL mode under `<repo>/.acdc/` and the in-memory channel layer.
Scale-out: DATABASE_URL (PostgreSQL) and REDIS_URL (channels-redis).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import dj_database_url

from acdc.datadir import access_token, prepare_data_dir, secret_key
from acdc.env import (
    channel_layers,
    env_allowed_hosts,
    env_bind_address,
    env_bool,
    env_choice,
    env_directory,
    env_int,
    env_mounts,
    env_repo_paths,
    env_str,
    env_url,
)
from chat.llm.environment import configure_offline_environment

configure_offline_environment()

BASE_DIR = Path(__file__).resolve().parent.parent

ACDC_REPO = env_directory("ACDC_REPO", Path.cwd())
ACDC_DATA_DIR = prepare_data_dir(
    ACDC_REPO, Path(env_str("ACDC_DATA_DIR") or ACDC_REPO / ".acdc").expanduser()
)
ACDC_MODEL = env_str("ACDC_MODEL")  # empty: chosen by chat.llm.facts.default_model()
ACDC_SMALLER_MODEL = env_str("ACDC_SMALLER_MODEL")
ACDC_API_BASE = env_url("ACDC_API_BASE", ("http", "https"))
ACDC_PROVIDER_GIVE_UP_SECONDS = env_int("ACDC_PROVIDER_GIVE_UP_SECONDS", 60, minimum=1)
# Tools on or off per model (chat.llm.facts.parse_tools); the window and prices (dollars
# per million tokens) assumed for a model litellm's map does not know.
ACDC_MODEL_TOOLS = env_str("ACDC_MODEL_TOOLS")
ACDC_CONTEXT_WINDOW = env_int("ACDC_CONTEXT_WINDOW", 0, minimum=0)
ACDC_INPUT_PRICE = env_str("ACDC_INPUT_PRICE")
ACDC_OUTPUT_PRICE = env_str("ACDC_OUTPUT_PRICE")
ACDC_BIND = env_bind_address("ACDC_BIND")
# Always a token (acdc.access), on loopback too: ACDC_TOKEN, else the one kept in the data folder.
ACDC_TOKEN = access_token(ACDC_DATA_DIR, env_str("ACDC_TOKEN"))
# Set by `acdc serve` for its run (acdc.terminal.runfile): what `acdc chat` must show.
ACDC_RUN_TOKEN = ""
ACDC_RECORD_REQUESTS = env_str("ACDC_RECORD_REQUESTS")
ACDC_MAX_FRAME_BYTES = env_int("ACDC_MAX_FRAME_BYTES", 1_000_000, minimum=1024)
ACDC_MAX_MESSAGE_CHARS = env_int("ACDC_MAX_MESSAGE_CHARS", 200_000, minimum=1)
# Images are refused above this many pixels, judged before decoding (a 190 KB PNG can decode
# to hundreds of MB), and at most this many decode at once in a process (history.images).
ACDC_MAX_IMAGE_PIXELS = env_int("ACDC_MAX_IMAGE_PIXELS", 40_000_000, minimum=1)
ACDC_IMAGE_DECODES = env_int("ACDC_IMAGE_DECODES", 2, minimum=1)
ACDC_TIER_SCHEME = env_choice("ACDC_TIER_SCHEME", ("acdc", "seed", "last", "none"), "acdc")
# While a tab is open and the person away, refresh the provider's cache before it expires
# when the session's rhythm says that costs less than rewriting it (chat.live.keepwarm).
ACDC_KEEP_WARM = env_bool("ACDC_KEEP_WARM", True)
ACDC_COMPACTION_TRIGGER_TOKENS = env_int("ACDC_COMPACTION_TRIGGER_TOKENS", 0, minimum=0)
ACDC_MAX_TOOL_ROUNDS = env_int("ACDC_MAX_TOOL_ROUNDS", 20, minimum=0)
# What the model reads of a command's output: its head and tail within this many bytes.
ACDC_COMMAND_OUTPUT_BYTES = env_int("ACDC_COMMAND_OUTPUT_BYTES", 8192, minimum=512)
# Limits on one run (chat.repo.commands.limits) and the longest timeout a declaration may have.
ACDC_RUN_MAX_PROCESSES = env_int("ACDC_RUN_MAX_PROCESSES", 512, minimum=16)
ACDC_RUN_MEMORY_MB = env_int("ACDC_RUN_MEMORY_MB", 4096, minimum=64)
ACDC_RUN_FILE_MB = env_int("ACDC_RUN_FILE_MB", 1024, minimum=1)
ACDC_COMMAND_MAX_TIMEOUT = env_int("ACDC_COMMAND_MAX_TIMEOUT", 3600, minimum=1)  # seconds
ACDC_RUN_TMP_MB = env_int("ACDC_RUN_TMP_MB", 1024, minimum=1)  # each private tmpfs
# MCP servers (chat.repo.mcp): their definitions sit in `tools` only while they fit this.
ACDC_MCP_TOOL_TOKENS = env_int("ACDC_MCP_TOOL_TOKENS", 4000, minimum=0)
ACDC_MCP_OUTPUT_BYTES = env_int("ACDC_MCP_OUTPUT_BYTES", 8192, minimum=512)
ACDC_COLLAPSE_PER_TURN = env_int("ACDC_COLLAPSE_PER_TURN", 5, minimum=1)
ACDC_COLLAPSE_TURNS_BACK = env_int("ACDC_COLLAPSE_TURNS_BACK", 3, minimum=1)
ACDC_MOUNTS = env_mounts("ACDC_MOUNTS")
# gitignore-style patterns of secret-shaped files, beyond the defaults (chat.repo.boundary)
ACDC_SECRET_PATTERNS = tuple(p for p in env_str("ACDC_SECRET_PATTERNS").split(",") if p.strip())
# files and folders (paths from the root) protected beyond chat.repo.protected's own
ACDC_PROTECTED_PATHS = env_repo_paths("ACDC_PROTECTED_PATHS")
ACDC_SUMMARY_BUDGET_TOKENS = env_int("ACDC_SUMMARY_BUDGET_TOKENS", 500, minimum=50)
ACDC_VERBATIM_WINDOW_TOKENS = env_int("ACDC_VERBATIM_WINDOW_TOKENS", 4000, minimum=0)
ACDC_CHECKPOINT_EVERY = env_int("ACDC_CHECKPOINT_EVERY", 10, minimum=0)  # turns; 0: off
ACDC_TURN_LEASE_SECONDS = env_int("ACDC_TURN_LEASE_SECONDS", 30, minimum=5)  # a dead worker's hold
ACDC_AUTO_ROLLBACK = env_bool("ACDC_AUTO_ROLLBACK", False)  # when the quality score asks
# How often an open tab's session is checked for changes made by another process (acdc chat).
ACDC_PANEL_POLL_MS = env_int("ACDC_PANEL_POLL_MS", 2000, minimum=100)
# Edit tools and blocks: the person reviews every edit (auto-apply is per session, off).
ACDC_EDITS = env_bool("ACDC_EDITS", True)
# After this many failed edits in one turn, the turn takes no more edits (and says so).
ACDC_MAX_FAILED_EDITS = env_int("ACDC_MAX_FAILED_EDITS", 8, minimum=1)
ACDC_GROUNDING = env_bool("ACDC_GROUNDING", False)
ACDC_GROUNDING_ITEMS = env_int("ACDC_GROUNDING_ITEMS", 5, minimum=1)
ACDC_GROUNDING_TOKENS = env_int("ACDC_GROUNDING_TOKENS", 1500, minimum=100)
# Project instructions (AGENTS.md, CLAUDE.md, …) in the system prompt: the first found, all, off.
ACDC_INSTRUCTIONS = env_choice("ACDC_INSTRUCTIONS", ("first", "all", "off"), "first")
ACDC_INSTRUCTIONS_TOKENS = env_int("ACDC_INSTRUCTIONS_TOKENS", 8000, minimum=100)  # per file
ACDC_ENDLESS_RECENT_RUNS = env_int("ACDC_ENDLESS_RECENT_RUNS", 6, minimum=0)
ACDC_ENDLESS_PASSTHROUGH_RUNS = env_int("ACDC_ENDLESS_PASSTHROUGH_RUNS", 2, minimum=0)
ACDC_ENDLESS_TOKEN_THRESHOLD = env_int("ACDC_ENDLESS_TOKEN_THRESHOLD", 0, minimum=0)
# The repository map's token budget (0: no map); unset, a sixteenth of the window, at most 8k.
ACDC_MAP_TOKENS = env_int("ACDC_MAP_TOKENS", 0, minimum=0) if env_str("ACDC_MAP_TOKENS") else None
# "Suggested for this message": the code regions ranked for each message (0: off).
ACDC_SUGGEST_TOKENS = env_int("ACDC_SUGGEST_TOKENS", 2500, minimum=0)

SECRET_KEY = secret_key(ACDC_DATA_DIR, env_str("SECRET_KEY"))
DEBUG = env_bool("ACDC_DEBUG", False)
# A DNS name rebound to this server is refused, token or not.
ALLOWED_HOSTS = env_allowed_hosts("ACDC_ALLOWED_HOSTS", ACDC_BIND)

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "history",
    "chat",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "acdc.csp.ContentSecurityPolicyMiddleware",
    # Static files, before the access token: they are the app's own public CSS and JS.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "acdc.access.AccessTokenMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Before the CSRF check, which parses the form: an upload Django cannot parse (too many
    # files) is then a clear 400 like any bad upload, not a bare one with a traceback.
    "chat.web.attachments.UploadGuardMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "chat.web.broadcast.ActMiddleware",
    # A full disk, a damaged database, PostgreSQL gone: a 503 with one line, no traceback.
    "chat.turn.faults.FaultMiddleware",
]

ROOT_URLCONF = "acdc.urls"
ASGI_APPLICATION = "acdc.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

_database_url = env_url("DATABASE_URL", ("postgres", "postgresql", "sqlite"))
ACDC_DB_CONN_MAX_AGE = env_int("ACDC_DB_CONN_MAX_AGE", 300, minimum=0)  # seconds; 0: never kept
# How long a SQLite write waits for a lock another program holds before it is given up and
# said (history.dbfaults); writers of acdc's own queue behind each other within it.
ACDC_DB_LOCK_SECONDS = env_int("ACDC_DB_LOCK_SECONDS", 20, minimum=1)
if _database_url:
    # Connections are kept (and checked before reuse): channels runs each database call in
    # a worker thread and closes expired connections around it, so with no reuse every
    # call opened a new PostgreSQL session (6.4 per turn in `acdc bench turn --part load`).
    # An HTTP request runs on a thread of its own under ASGI: its kept connection closes only
    # when the garbage collector frees it (up to ~25 open per worker after bursts of page
    # loads). Django's pool (OPTIONS "pool", which needs psycopg-pool) leaves none open.
    DATABASES = {
        "default": dj_database_url.parse(
            _database_url, conn_max_age=ACDC_DB_CONN_MAX_AGE, conn_health_checks=True
        )
    }
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"]["ENGINE"] = "acdc.postgres"  # a health check without a round trip
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": ACDC_DATA_DIR / "acdc.sqlite3",
            "OPTIONS": {
                # A new database gets 512-byte pages (an existing one keeps its own): a turn
                # writes and keeps far less than with 4 KB; a scan reads more pages
                # (`acdc bench turn --part storage`, NOTES-storage.md).
                "init_command": (
                    "PRAGMA page_size=512; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                ),
                "transaction_mode": "IMMEDIATE",
                "timeout": ACDC_DB_LOCK_SECONDS,
            },
            # Kept as for PostgreSQL: opening one (its pragmas, Django's ~30 SQL functions)
            # cost about a tenth of a streamed reply's CPU when each once-a-second save and
            # each frame's database call opened its own.
            "CONN_MAX_AGE": ACDC_DB_CONN_MAX_AGE,
            # The test database is a file too: an in-memory one shares its cache between
            # threads, where a second writer fails at once instead of waiting its turn
            # (the background token count and a turn both write).
            "TEST": {"NAME": str(ACDC_DATA_DIR / "test-acdc.sqlite3")},
        }
    }

REDIS_URL = env_url("REDIS_URL", ("redis", "rediss"))
CHANNEL_LAYERS = channel_layers(REDIS_URL)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# WhiteNoise serves the files straight from the staticfiles finders (static/ and the apps'),
# indexed once at start-up, so `make run` needs no collectstatic step and there is no
# STATIC_ROOT (WhiteNoise would warn about its missing folder on every start). Only files
# in that index are served; any other /static/ path, `..` included, falls through to a 404.
# With ACDC_DEBUG it looks files up per request instead, so edits show without a restart.
WHITENOISE_USE_FINDERS = True
# Under ASGI, Django reads WhiteNoise's (synchronous) file response whole in a thread and says
# so once per process (Django's own ASGI static handler does the same, silently). The
# files are small.
warnings.filterwarnings(
    "ignore",
    message="StreamingHttpResponse must consume synchronous iterators",
    category=Warning,
    module=r"django\.core\.handlers\.asgi",
)
SESSION_COOKIE_SAMESITE = "Strict"
CSRF_COOKIE_SAMESITE = "Strict"
X_FRAME_OPTIONS = "DENY"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "loggers": {
        "acdc": {"handlers": ["stderr"], "level": env_str("ACDC_LOG_LEVEL") or "INFO"},
        "chat": {"handlers": ["stderr"], "level": env_str("ACDC_LOG_LEVEL") or "INFO"},
        "LiteLLM": {"level": "WARNING"},
    },
}
