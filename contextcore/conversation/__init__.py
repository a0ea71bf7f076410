"""The working history and the ways it shrinks when it outgrows its budget.

Whole exchanges, the sliding window and emergency truncation (`exchanges`); layer 1
compaction at a topic boundary (`compaction`, asking `topics` where the boundary is); and
Endless mode, where a smaller model rewrites old runs into a managed view (`endless`, with
its context `templates`). Invariant: a failing model never breaks a turn (fail open).
Non-goals: persistence (the history app stores messages and compactions), prompt layout.
"""
