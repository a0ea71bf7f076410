"""`acdc bench`: the prompt-cache and context-assembly benchmarks (code in `tests/bench/`).

The benchmarks and their command line live in `tests/bench/` (`tests.bench.runner`), which
is no installed package: this entry only finds the source checkout, puts it on `sys.path`
and hands over. Each benchmark prints a markdown table and writes `<out>/<name>.md` and
`.json`. Never a timed test.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

EXIT_USAGE = 2


def main(argv: Sequence[str]) -> int:
    if not _checkout_importable():
        print(
            "acdc bench: error: the benchmarks need a source checkout (tests/bench)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    # Lazy: `tests.bench` exists only in a source checkout, and each benchmark must load
    # only what it measures, so nothing of it is imported before a benchmark is chosen.
    from tests.bench.runner import main as run_benchmarks

    return run_benchmarks(argv)


def _checkout_importable() -> bool:
    """`tests.bench` is no installed package: put the checkout on sys.path, which a console
    script's does not start with."""
    root = Path(__file__).resolve().parent.parent
    if not (root / "tests" / "bench" / "__init__.py").is_file():
        return False
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return True
