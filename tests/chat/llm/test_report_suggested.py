"""`acdc chat --dry-run`'s report lists what was suggested for the message, and why."""

from __future__ import annotations

import pytest

from tests.test_cli import acdc

BILLING = (
    "def compute_late_fee(invoice):\n"
    "    penalty = invoice.days_late * 3\n"
    "    return max(penalty, 0)\n"
)


@pytest.fixture
def repo_files():
    return {"app/billing.py": BILLING, "app/main.py": "def run():\n    return 1\n"}


def test_the_dry_run_lists_the_suggested_regions_with_the_words_that_matched(root):
    done = acdc(
        "chat",
        "--new",
        "--model",
        "acdc/dry-run",
        "Why does compute_late_fee charge twice?",
        repo=root,
    )
    assert done.returncode == 0, done.stderr
    assert "### Suggested for this message" in done.stdout
    assert "- `app/billing.py:1-3 compute_late_fee` (" in done.stdout
    assert "matched `compute_late_fee`" in done.stdout
    off = acdc(
        "chat",
        "--new",
        "--model",
        "acdc/dry-run",
        "compute_late_fee?",
        repo=root,
        ACDC_SUGGEST_TOKENS="0",
    )
    assert off.returncode == 0 and "Suggested for this message" not in off.stdout
