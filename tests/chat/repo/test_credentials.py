"""Credential shapes: found, replaced by a marker naming the kind, left out of the map, and
redacted from what the model's tools return (with a line that says so)."""

from __future__ import annotations

import json

import pytest

from chat.repo import credentials, indexing
from chat.repo.repomap import builder
from chat.repo.repomap.builder import RepoMaps
from chat.repo.tools.calls import ToolCall
from chat.repo.tools.context_tools import run_tool
from contextcore.tokens import TokenCounter
from history.models import ContentObject

# Built from parts so that no scanner takes this test for a leak of its own.
AWS_KEY = "AKIA" + "Q3EXAMPLE7BZ4NVT"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
SECRETS = (AWS_KEY, AWS_SECRET, GITHUB_TOKEN)
SETTINGS = (
    f'AWS_ACCESS_KEY_ID = "{AWS_KEY}"\n'
    f'AWS_SECRET_ACCESS_KEY = "{AWS_SECRET}"\n'
    f'GITHUB_TOKEN = "{GITHUB_TOKEN}"\n'
    'REGION = "eu-west-1"\n'
    "def connect(region: str = REGION) -> None: ...\n"
)


@pytest.fixture
def repo_files():
    return {"settings.py": SETTINGS, "app.py": "from settings import connect\nconnect()\n"}


@pytest.fixture
def repo_is_git():
    return True


JWT = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFU"


@pytest.mark.parametrize(
    ("text", "kind", "kept", "secret"),
    [
        (
            f"aws_secret_access_key = {AWS_SECRET}\n",
            "an AWS secret access key",
            "aws_secret_access_key = ",
            AWS_SECRET,
        ),
        (f"Authorization: Bearer {JWT}", "a JSON Web Token", "Bearer ", JWT[:12]),
        (
            "DATABASE_URL=postgres://app:s3cr3t-Pw@db/app",
            "a password in a URL",
            "postgres://app:",
            "s3cr3t",
        ),
        ('"PASSWORD": "hunter2-Horse",', "a password or secret", '"PASSWORD": "', "hunter2"),
        ("client_secret='Q8x_2kLm9PzT'", "a password or secret", "client_secret='", "Q8x_"),
    ],
)
def test_a_credential_is_replaced_by_its_kind_and_the_name_stays(text, kind, kept, secret):
    redaction = credentials.redact(text)

    assert redaction.found == (kind,)
    assert f"{kept}[redacted: {kind}]" in redaction.text
    assert secret not in redaction.text


@pytest.mark.parametrize(
    "text",
    [
        'password = "changeme"',  # a word: a placeholder, not a secret
        'PASSWORD = os.environ["PASSWORD"]',
        "token = request.headers.get('token')",
        "https://docs.example.com:8443/path@v2",
        "eyJ is how a JSON Web Token starts.",
    ],
)
def test_names_and_placeholders_are_not_credentials(text):
    assert credentials.redact(text).found == ()


def test_a_token_given_to_a_secret_name_is_named_for_what_it_is():
    redaction = credentials.redact(f'GITHUB_SECRET = "{GITHUB_TOKEN}"')

    assert redaction.text == 'GITHUB_SECRET = "[redacted: a GitHub token]"'


def test_a_private_key_is_replaced_whole_and_what_follows_is_still_read():
    key = (
        "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\nQUJDREVGR0hJSktMTU5P\n"
    )
    redaction = credentials.redact(f"the key:\n{key}token: {GITHUB_TOKEN}\n")

    assert redaction.found == ("a private key", "a GitHub token")
    assert "b3BlbnNz" not in redaction.text and "QUJDREVG" not in redaction.text
    assert GITHUB_TOKEN not in redaction.text


def test_a_tool_output_says_how_many_values_were_redacted_and_of_which_kinds():
    output = credentials.tool_output(SETTINGS)

    assert not any(secret in output for secret in SECRETS)
    assert output.splitlines()[-1] == (
        "[3 credential-shaped values redacted: an AWS access key, an AWS secret access key "
        "and a GitHub token]"
    )
    assert credentials.tool_output("nothing here") == "nothing here"


def test_the_same_text_is_scanned_once():
    text = f"key = {AWS_KEY} " + "x" * 1000
    credentials.redact(text)
    key = credentials._key(text)
    assert credentials._CACHE.get(key) is not None
    assert credentials.redact(text).text == credentials.redact(text).text


def test_the_map_names_the_constants_and_leaves_their_secret_values_out(root):
    built = RepoMaps().build(
        root, budget=4000, count=TokenCounter("cl100k_base").count_text, selected=["app.py"]
    )

    assert not any(secret in built.main for secret in SECRETS)
    assert 'AWS_ACCESS_KEY_ID = "[redacted: an AWS access key]"' in built.main
    assert 'AWS_SECRET_ACCESS_KEY = "[redacted: an AWS secret access key]"' in built.main
    assert 'GITHUB_TOKEN = "[redacted: a GitHub token]"' in built.main
    assert 'REGION = "eu-west-1"' in built.main  # an ordinary value stays


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ('API_KEY = "shortsecret"', 'API_KEY = "…"'),
        ('SIGNING_SALT = "pepper"', 'SIGNING_SALT = "…"'),
        ('BUILD_ID = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"', 'BUILD_ID = "…"'),
        (
            "def login(user: str, password: str = 'tiger') -> None: ...",
            "def login(user: str, password: str = '…') -> None",
        ),
        ('GREETING = "hello world"', 'GREETING = "hello world"'),
    ],
)
def test_the_outline_elides_values_by_name_or_randomness(root, line, shown):
    (root / "consts.py").write_text(line + "\n")

    text = builder.outline(root, "consts.py", RepoMaps())

    assert text.splitlines()[1].strip() == shown


@pytest.fixture
def served(root, settings):
    from chat.repo.indexing import Repository

    settings.ACDC_REPO = root
    return Repository(root=root, filesystem_id="fs-test")


@pytest.fixture
def session(served):
    from history import services

    return services.session_create(repository=str(served.root), model="acdc/fake")


def call(session, repo, name, **args):
    return run_tool(session, ToolCall("c-" + name, name, json.dumps(args)), repo, maps=RepoMaps())


def said_so(output: str) -> bool:
    return output.splitlines()[-1].startswith("[3 credential-shaped values redacted: ")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "args"), [("read_file", {"path": "settings.py"}), ("grep", {"pattern": "KEY|TOKEN"})]
)
def test_the_tools_redact_credentials_and_say_so(served, session, name, args):
    result = call(session, served, name, **args)

    assert result.status == "ok" and "AWS_ACCESS_KEY_ID" in result.output
    assert not any(secret in result.output for secret in SECRETS)
    assert said_so(result.output)
    recorded = ContentObject.objects.get(pk=result.object_id).latest_version().content
    assert recorded == result.output  # what is stored, shown and sent again is the same


@pytest.mark.django_db
def test_the_outline_tool_shows_the_markers_of_the_map(served, session):
    result = call(session, served, "outline", path="settings.py")

    assert not any(secret in result.output for secret in SECRETS)
    assert 'GITHUB_TOKEN = "[redacted: a GitHub token]"' in result.output


@pytest.mark.django_db
def test_activating_an_output_recorded_before_redaction_redacts_it(served, session):
    old = indexing.record_toolcall(
        session=session,
        call_id="c-old",
        tool="grep",
        args={"pattern": "KEY"},
        status="ok",
        output=SETTINGS,
    )
    result = call(session, served, "activate", id=old.object.id)

    assert result.status == "ok" and "AWS_SECRET_ACCESS_KEY" in result.output
    assert not any(secret in result.output for secret in SECRETS)
    assert said_so(result.output)


# -- framework secret settings: a literal given to a name that says secret -----------------

# Built from parts so that no scanner takes this test for a leak of its own.
DJANGO_KEY = "django-insecure-" + "k8$#v)q2%x^w(=n@u!b-r7+_*lp9&zf0s1eg3hj5oi6mc4ya"
PRODUCTION_KEY = "k8$#v)q2%x^w(=n@u!b-r7+_*lp9&" + "zf0s1eg3hj5oi6mc4ya"


@pytest.mark.parametrize(
    ("line", "secret", "kind"),
    [
        (f'SECRET_KEY = "{DJANGO_KEY}"', DJANGO_KEY, "a Django secret key"),
        (f"SECRET_KEY = os.environ.get('KEY', '{DJANGO_KEY}')", DJANGO_KEY, "a Django secret key"),
        (f"SECRET_KEY = '{PRODUCTION_KEY}'", PRODUCTION_KEY, credentials.GENERIC),
        (f'SECRET_KEY: str = "{PRODUCTION_KEY}"', PRODUCTION_KEY, credentials.GENERIC),
        ('DB_PASSWORD = "S3cr$t%pass"', "S3cr$t%pass", credentials.GENERIC),
        ('STRIPE_WEBHOOK_SECRET = "whsec_9f8e7d6c5b4a"', "whsec_9f8e", credentials.GENERIC),
        ('const API_TOKEN = "a8F3kP0qZ7xR2mN5";', "a8F3kP0q", credentials.GENERIC),
        ('  apiKey: "Xk82mQp0Lz9aB7cD",', "Xk82mQp0", credentials.GENERIC),
        ("  clientSecret: `Zx9!kQ2#mP7@`,", "Zx9!kQ2#", credentials.GENERIC),
        ("  password: Sup3rS3cret!  # yaml", "Sup3rS3cret", credentials.GENERIC),
        ("db_password = hunter2-Horse", "hunter2-Horse", credentials.GENERIC),  # .ini
        ('session_token = "Tq8Zk2Xv9Lm4Pw7R"', "Tq8Zk2Xv", credentials.GENERIC),  # .toml
        ("export GITHUB_API_TOKEN=k8f2x9q1m4z7p3r6w0", "k8f2x9q1", credentials.GENERIC),
        ('ADMIN_PWD="Adm1n!Pass"', "Adm1n!Pass", credentials.GENERIC),
        ('auth_token := "Zx9!kQ2#mP7@"', "Zx9!kQ2#", credentials.GENERIC),  # Go
    ],
)
def test_a_literal_given_to_a_secret_setting_is_redacted(line, secret, kind):
    redaction = credentials.redact(line + "\n")

    assert redaction.found == (kind,)
    assert secret not in redaction.text and credentials.marker(kind) in redaction.text


@pytest.mark.parametrize(
    "line",
    [
        'SECRET_KEY = os.environ["SECRET_KEY"]',
        "SECRET_KEY = env('SECRET_KEY')",
        "password = get_password()",
        "db_password = settings.DB_PASSWORD",
        'TOKEN_TYPE = "bearer"',  # the name's last word decides: a type, not a token
        'token = "bearer"',
        'CACHE_KEY = "user_profile_cache_v2"',  # a name, not a generated key
        'sort_key = "created_at_desc"',
        'SESSION_KEY = "_auth_user_id"',
        'monkey = "a1b2c3d4e5f6g7h8i9"',  # "key" ends the word, not a part of the name
        '  password: "${DB_PASSWORD}"',
        '  password: "{{ vault_db_password }}"',
        'password = "%(db_pass)s"',
        'API_TOKEN = "$GITHUB_TOKEN"',
        "secret_file: /run/secrets/db_password",
        'private_key_path = "/etc/ssl/private/server.key"',
        "api_key: SecretStr",  # a type annotation
        "key=lambda item: item[0]",
        'password: str = "changeme"',
        "        password=self.password,",  # a keyword argument, not a .env line
        "    sharedSecret = self.proto._generateSharedSecret(",
        "    @type password: L{bytes}",
        'unitKey="heightOfGeoidAboveWGS84Units"',  # a name in camel case
        "  api_key: os.environ/OPENAI_API_KEY",
        'api_key="{key_token}",',
        "<label>Password:</label>",
        "case 9:o.key=r.C0.HT,o.cancel=!0;break",  # minified code
        '"API Key: ",n.api_key_masked,(0,s.jsx)("b")',
    ],
)
def test_references_code_and_names_given_to_secret_settings_stay(line):
    assert credentials.redact(line + "\n").found == ()


def test_spans_are_where_redact_puts_its_markers_in_the_order_of_the_text():
    text = (
        f"AWS = {AWS_KEY}\nSECRET_KEY = '{DJANGO_KEY}'\nDB_PASSWORD = 'S3cr$t%pass'\n"
        f"url = postgres://app:s3cr3t-Pw@db/app and {GITHUB_TOKEN}\n"
    )

    found = credentials.spans(text)

    assert [text[b:e] for b, e, _ in found] == [
        AWS_KEY, DJANGO_KEY, "S3cr$t%pass", "s3cr3t-Pw", GITHUB_TOKEN
    ]  # fmt: skip
    assert [m for _, _, m in found] == [
        credentials.marker(k) for k in credentials.redact(text).found
    ]
    rebuilt, start = [], 0
    for begin, end, marker in found:
        rebuilt += [text[start:begin], marker]
        start = end
    assert "".join([*rebuilt, text[start:]]) == credentials.redact(text).text
    assert credentials.spans("nothing here") == [] and credentials.spans("") == []


def test_the_outline_leaves_a_django_key_out_wherever_it_is_given(root):
    (root / "conf.py").write_text(
        f'SECRET_KEY = "{DJANGO_KEY}"\n'
        f'DEFAULTS = {{"SECRET_KEY": "{DJANGO_KEY}"}}\n'
        f"def make(key: str = '{DJANGO_KEY}') -> None: ...\n"
    )

    text = builder.outline(root, "conf.py", RepoMaps())

    assert "k8$#" not in text and "DEFAULTS" in text and "SECRET_KEY" in text
