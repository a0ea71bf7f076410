"""A long failing run reaches the model as what a person reads first: the summary, every
failure's name and first lines, then head and tail, within the budget and without colour
codes. pytest's output is real; mocha's and go's are printed in their formats
(`failure_outputs`), as neither tool is on this machine."""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async

from chat.repo.commands import declaring
from chat.repo.commands.failures import NAME, SUMMARY, ranked
from chat.repo.commands.output import Captured, for_model, model_copy
from chat.turn import checking
from chat.web.conversation import render_conversation
from history.models import Session
from tests.chat.repo.commands_support import PYTHON
from tests.chat.repo.failure_outputs import (
    go_failures,
    go_test_verbose,
    mocha_failure_titles,
    mocha_spec,
    pytest_failing,
)

BUDGET = 8192


def _captured(data: bytes) -> Captured:
    captured = Captured()
    captured.add(data)
    assert captured.total >= 80_000
    return captured


def _within(text: str, budget: int = BUDGET) -> str:
    assert len(text.encode()) <= budget
    assert "\x1b" not in text and "␛" not in text
    return text


def test_a_failing_pytest_run_reaches_the_model_with_its_summary_and_every_failure(tmp_path):
    captured = _captured(pytest_failing(tmp_path, failures=70, passes=300))

    text = _within(for_model(captured, BUDGET))

    assert "short test summary info" in text
    assert re.search(r"=+ 70 failed, 300 passed in [\d.]+s =+", text)
    for i in range(70):
        assert f"FAILED test_generated.py::test_broken_{i} - AssertionError" in text

    small = _within(for_model(captured, 2048), 2048)  # not all fit: the rest are counted
    shown = len(re.findall(r"^FAILED test_generated\.py::test_broken_\d+ ", small, re.M))
    left_out = int(re.search(r"\((\d+) more failure names did not fit\)", small).group(1))
    assert shown >= 5 and shown + left_out == 70
    assert "70 failed, 300 passed" in small


def test_a_failing_mocha_run_reaches_the_model_with_its_counts_and_every_failure():
    captured = _captured(mocha_spec(passes=1400, failures=14))

    text = _within(for_model(captured, BUDGET))

    assert "1400 passing (2s)" in text and "\n  14 failing\n" in text
    for number, title in enumerate(mocha_failure_titles(14), 1):
        assert re.search(rf"^  {number}\) app\n.*\n         {title}:$", text, re.M), title
        assert f'got 500 "Internal Server Error" (case {number})' in text


@pytest.mark.django_db(transaction=True)
async def test_a_failed_check_is_sent_back_plain_and_its_card_is_drawn_in_colour(
    served, served_root
):
    (served_root / "mocha.out").write_bytes(mocha_spec(passes=1400, failures=14))
    code = "import sys; sys.stdout.buffer.write(open('mocha.out', 'rb').read()); sys.exit(1)"
    await database_sync_to_async(declaring.add)(str(served_root), "test", [PYTHON, "-c", code])
    session = await Session.objects.acreate(repository=str(served_root), model="acdc/fake")

    repo = served.repository.indexed()
    ran = await checking.run_check(session, "test", runs=served.commands, repo=repo)

    sent = _within(ran.fix_request(), BUDGET + 1024)
    assert "\n  14 failing\n" in sent and all(t in sent for t in mocha_failure_titles(14))
    page = await database_sync_to_async(render_conversation)(session)
    assert '<span class="ansi31">  14 failing</span>' in page and "\x1b" not in page


def test_a_failing_go_test_run_reaches_the_model_with_its_failures_and_packages():
    captured = _captured(go_test_verbose(packages=3, tests=700, failing=20))

    text = _within(for_model(captured, BUDGET))

    assert "FAIL\texample.com/shop/internal/service0\t0.012s" in text
    assert "ok  \texample.com/shop/internal/service2\t0.006s" in text  # the tail
    for name in go_failures(20):
        assert f"--- FAIL: {name} (0.00s)" in text
    assert text.count(": status = 500, want 200") == 20


def test_any_tool_s_error_line_is_kept_and_the_card_keeps_the_colours():
    noise = b"".join(
        b"\x1b[32mcompiling\x1b[0m module %05d of the project\n" % i for i in range(3000)
    )
    data = noise + b"\x1b[31merror[E0308]: mismatched types in src/main.rs\x1b[0m\n" + noise

    copy = model_copy(_captured(data), BUDGET)

    assert "error[E0308]: mismatched types in src/main.rs\n" in _within(copy.plain)
    assert "\x1b[31merror[E0308]: mismatched types in src/main.rs\x1b[0m" in copy.shown
    assert printable_lines(copy.shown) == copy.plain.splitlines()


def printable_lines(text: str) -> list[str]:
    return re.sub(r"\x1b\[[0-9;]*m", "", text).splitlines()


@pytest.mark.parametrize(
    ("line", "rank"),
    [
        ("test result: FAILED. 12 passed; 3 failed; 0 ignored; 0 measured", SUMMARY),
        ("test parser::tests::rejects_empty ... FAILED", NAME),
        ("Tests:       3 failed, 41 passed, 44 total", SUMMARY),
        ("  ● Router › rejects a missing route", NAME),
        ("      Tests  2 failed | 40 passed (42)", SUMMARY),
        (" FAIL  src/router.test.ts > Router > rejects a missing route", NAME),
        ("# fail 14", SUMMARY),
        ("not ok 3 - rejects a missing route", NAME),
    ],
)
def test_cargo_jest_vitest_and_tap_summaries_and_names_rank_first(line, rank):
    assert ranked(["some output", line, "more output"])[1][0] == rank


@pytest.mark.parametrize(
    "line",
    [
        "    ✔ should handle errors via arity 4 functions",  # mocha's spec reporter
        "  ✓ rejects a failing promise (3 ms)",  # jest, vitest
        "tests/test_io.py::test_read[disk error] PASSED                [ 40%]",  # pytest -v
        "ok  \texample.com/project/errors\t0.012s",  # go test
        "test io::error::tests::wraps ... ok",  # cargo test
        "ok 7 - an assertion holds",  # TAP
    ],
)
def test_a_passing_test_whose_name_says_error_is_not_kept_as_an_error_line(line):
    """Express's 83 KB mocha run spent the cut's room on passing tests named for errors
    ("✔ should handle errors …"): a line that reports a pass is not an error line."""
    assert 1 not in ranked(["some output", line, "more output"])
