"""Test runners' failing output, for the tests of the failure-summary cut.

pytest's is real (a generated test file run by this interpreter). mocha and go are not on
this machine, so `mocha_spec` and `go_test_verbose` print what they print, byte for byte
in their formats: mocha 10's spec reporter (lib/reporters/spec.js and base.js: the suite
tree with "✔ title" and "n) title", the epilogue " N passing (Ns)", "  N failing", then
each failure as "  n) title path:" with its path indented, the message in red, the stack
in grey; colours as mocha's `color()` writes them, ESC [ code m … ESC [ 0 m), and
`go test -v` of several packages (=== RUN, --- PASS / --- FAIL with the test's log lines
indented, FAIL, "FAIL\\tpkg\\t0.012s", "ok  \\tpkg\\t0.004s").
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ESC = "\x1b"


def _c(code: int, text: str) -> str:
    return f"{ESC}[{code}m{text}{ESC}[0m"


def pytest_failing(folder: Path, failures: int, passes: int) -> bytes:
    """What pytest prints (with colours) for a file of `failures` failing tests, each with
    a long assertion diff, and `passes` passing ones."""
    tests = [f"def test_passing_{i}():\n    assert True\n" for i in range(passes)]
    for i in range(failures):
        tests.append(
            f"def test_broken_{i}():\n"
            f"    got = {{'id': {i}, 'rows': [{{'n': n, 'name': 'row ' * 8}} for n in range(9)]}}\n"
            f"    want = {{'id': {i + 1}, 'rows': got['rows'][::-1]}}\n"
            f"    assert got == want, 'record {i} is wrong'\n"
        )
    (folder / "test_generated.py").write_text("\n".join(tests))
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--color=yes"]
    # As a person's terminal shows it: under CI (CI=true) pytest writes each summary line
    # whole instead of cut to the terminal's width, and a worker's width is not a person's.
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER")}
    done = subprocess.run(
        [*argv, "test_generated.py"],
        cwd=folder,
        env={**env, "COLUMNS": "80"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert done.returncode == 1, done.stdout[-2000:]
    return done.stdout


def mocha_failure_titles(failures: int) -> list[str]:
    return [f"should answer request {i} with its status" for i in range(failures)]


def mocha_spec(passes: int, failures: int) -> bytes:
    """mocha's spec reporter for suites res > .send(body) and app > .use(fn), `passes`
    passing tests with the `failures` failing ones among them."""
    titles = mocha_failure_titles(failures)
    lines = [""]
    body: list[str] = []
    every = max(passes // max(failures, 1), 1)
    failed = 0
    for suite in ("res", "app"):
        lines.append(f"  {suite}")
        for group in range(passes // 20):
            lines.append(f"    .method{group}(body)")
            for n in range(10):
                index = group * 10 + n
                if failed < failures and index % every == every - 1 and suite == "app":
                    failed += 1
                    lines.append(f"        {_c(31, f'{failed}) {titles[failed - 1]}')}")
                    body.append(f"{suite}|.method{group}(body)|{titles[failed - 1]}")
                    continue
                title = f"should send body {index} of {suite} with the right headers"
                lines.append(f"      {_c(32, '  ✔')}{_c(90, ' ' + title)}")
    while failed < failures:  # the rest at the end of the last suite
        failed += 1
        lines.append(f"        {_c(31, f'{failed}) {titles[failed - 1]}')}")
        body.append(f"app|.last(body)|{titles[failed - 1]}")
    lines += ["", f"{_c(92, ' ')}{_c(32, f' {passes} passing')}{_c(90, ' (2s)')}"]
    lines += [_c(31, f"  {failures} failing"), ""]
    for number, path in enumerate(body, 1):
        lines.append(_mocha_failure(number, path.split("|")))
    return ("\n".join(lines) + "\n\n").encode()


def _mocha_failure(number: int, path: list[str]) -> str:
    title = path[0] + "".join(
        "\n     " + "  " * index + part for index, part in enumerate(path[1:], 1)
    )
    message = f'Error: expected 200 "OK", got 500 "Internal Server Error" (case {number})'
    stack = [f"    at Test._assertStatus (node_modules/supertest/lib/test.js:{267 + n}:12)"
             for n in range(12)]  # fmt: skip
    stack.append(
        "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)"
    )
    stack_text = "\n".join("  " + line for line in stack)
    return f"{_c(0, f'  {number}) {title}:')}\n{_c(31, '     ' + message)}\n{_c(90, stack_text)}\n"


def go_failures(failing: int) -> list[str]:
    return [f"TestHandler{n}Rejects" for n in range(failing)]


def go_test_verbose(packages: int, tests: int, failing: int) -> bytes:
    """`go test -v ./...` of `packages` packages of `tests` tests each; `failing` tests fail
    in the first package (spread among the passing ones), each with two log lines."""
    names = go_failures(failing)
    out: list[str] = []
    for p in range(packages):
        pkg = f"example.com/shop/internal/service{p}"
        failed_here = names if p == 0 else []
        every = max(tests // max(len(failed_here), 1), 1)
        for t in range(tests):
            if failed_here and t % every == 0 and t // every < len(failed_here):
                name = failed_here[t // every]
                out += [
                    f"=== RUN   {name}",
                    f"    handler_test.go:{40 + t}: status = 500, want 200",
                ]
                out += [f'    handler_test.go:{41 + t}: body = "oops", want "ok"']
                out.append(f"--- FAIL: {name} (0.00s)")
                continue
            name = f"TestPricingRuleNumber{t}AppliesDiscounts"
            out += [f"=== RUN   {name}", f"--- PASS: {name} (0.00s)"]
        if failed_here:
            out += ["FAIL", f"FAIL\t{pkg}\t0.{p + 12:03d}s"]
        else:
            out += ["PASS", f"ok  \t{pkg}\t0.{p + 4:03d}s"]
    out.append("FAIL")
    return ("\n".join(out) + "\n").encode()
