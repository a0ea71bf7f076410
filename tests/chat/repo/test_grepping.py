"""grep is no oracle for a redacted value: it searches the text the model is shown, so a
guess at what is behind a marker gets the same answer whatever it guesses."""

from __future__ import annotations

import json
import re

import pytest

from chat.repo import credentials
from chat.repo.repomap.builder import RepoMaps
from chat.repo.tools.calls import ToolCall
from chat.repo.tools.context_tools import MAX_OUTPUT_CHARS, run_tool

pytestmark = pytest.mark.django_db
# Built from parts so that no scanner takes this test for a leak of its own.
TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4"
KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx8Qm3k\nQk9aZr7T2bPq\n"
    "-----END RSA PRIVATE KEY-----"
)
CONFIG = f"name: demo\nGITHUB_TOKEN: {TOKEN}\nretries: 3\n"
DEPLOY = f"{KEY}\nhost = example.org\n"


@pytest.fixture
def repo_files():
    return {"ci.yml": CONFIG, "deploy.txt": DEPLOY, "notes.md": "GITHUB_TOKEN: see ci.yml\n"}


@pytest.fixture
def repo_is_git():
    return True


def grep(session, repo, pattern: str) -> str:
    call = ToolCall("c-grep", "grep", json.dumps({"pattern": pattern}))
    return run_tool(session, call, repo, maps=RepoMaps()).output


def test_two_guesses_at_a_redacted_value_get_the_same_answer(served_root, repo, session):
    right, wrong = (grep(session, repo, f"TOKEN: ghp_{c}") for c in ("a", "b"))
    assert right == wrong == "(no matches)"
    whole = {grep(session, repo, re.escape(t)) for t in (TOKEN, TOKEN[:-1] + "Z")}
    assert whole == {"(no matches)"}
    assert grep(session, repo, "MIIEow") == grep(session, repo, "XXXXow") == "(no matches)"


def test_a_pattern_of_the_marker_finds_the_marker_where_the_model_saw_it(
    served_root, repo, session
):
    said = grep(session, repo, r"TOKEN: \[redacted: a GitHub")
    assert said.splitlines()[0] == "ci.yml:2:GITHUB_TOKEN: [redacted: a GitHub token]"
    assert said.splitlines()[-1] == "[1 credential-shaped value redacted: a GitHub token]"
    # The key's lines are one marker as read_file shows them: what follows is line 2.
    assert grep(session, repo, "^host") == "deploy.txt:2:host = example.org"
    beside = grep(session, repo, "GITHUB_TOKEN")
    assert beside.splitlines()[:2] == [
        "ci.yml:2:GITHUB_TOKEN: [redacted: a GitHub token]",
        "notes.md:1:GITHUB_TOKEN: see ci.yml",
    ]


def test_a_cut_never_leaves_part_of_a_value(served_root, repo, session):
    (repo.root / "long.txt").write_text("x" * (MAX_OUTPUT_CHARS - 10) + f" {TOKEN}\n")
    call = ToolCall("c-read", "read_file", json.dumps({"path": "long.txt"}))
    said = run_tool(session, call, repo, maps=RepoMaps()).output
    assert "ghp_" not in said and "[cut: " in said
    assert said.endswith("[1 credential-shaped value redacted: a GitHub token]")


SAMPLES = (
    KEY,
    "AKIA" + "Q3EXAMPLE7BZ4NVT",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    TOKEN,
    "github_pat_" + "11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789abcdefghijklmnopq",
    "glpat-" + "aB3dE5fG7hJ9kL1mN2pQ",
    "xoxb-" + "1234567890-abcdefghij",
    "sk-ant-" + "api03-aB3dE5fG7hJ9kL1mN2pQ4rS6",
    "sk-proj-" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4",
    "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "sk_live_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6",
    "npm_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4",
    "pypi-AgE" + "IcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAACKlsz",
    "hf_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2z",
    "SG." + "aB3dE5fG7hJ9kL1mN2pQ4r.aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4bC6dE8f",
    "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFU",
    "postgres://app:s3cr3t-Pw@db/app",
    "SECRET_KEY = 'django-insecure-" + "k8$#v)q2%x^w(=n@u!b-r7+_*lp9&zf0s1eg3hj5oi6mc4ya'",
    'DB_PASSWORD = "hunter2-Horse"',
    "API_TOKEN:\t'Xk82mQp0Lz7Rt4Wv9Nb3'",
)


def test_every_kind_of_value_is_on_a_line_the_candidate_pattern_finds():
    candidate = re.compile(credentials.CANDIDATE_LINE, re.IGNORECASE)
    kinds = set()
    for text in SAMPLES:
        redaction = credentials.redact(text)
        assert redaction.found, text
        kinds.update(redaction.found)
        assert any(candidate.search(line) for line in text.splitlines()), text
    assert kinds == set(credentials.KINDS)  # a new shape needs a sample here, and a lead
