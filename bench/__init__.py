"""acdc's benchmarks, run by `acdc bench`."""

from pathlib import Path

# The checkout the benchmarks run from: where `python -m acdc` and the corpus's sources are.
CHECKOUT = Path(__file__).resolve().parents[1]
