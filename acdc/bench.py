"""`acdc bench`: the prompt-cache and context-assembly benchmarks (the `bench` package).

The benchmarks and their command line live in the top-level `bench` package, shipped with
acdc beside the apps, so the command imports product code only, never the tests. Each
benchmark prints a markdown table and writes `<out>/<name>.md` and `.json`. Never a timed
test.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str]) -> int:
    # Lazy: each benchmark must load only what it measures (the assembly benchmark's max
    # RSS excludes Django and litellm), so nothing of it is imported before `acdc bench`.
    from bench.runner import main as run_benchmarks

    return run_benchmarks(argv)
