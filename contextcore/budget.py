"""Budget sections: what each part of the prompt is, how much it may take, what goes first.

Seed 002's fixed allocation made general: every request is split into the named sections
below, each with a share of the model's input budget (for the HUD's "used of allocated")
and a trim priority (lowest is trimmed first when a request would not fit). The trim
order itself runs in `ContextManager`; this module is data and arithmetic only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class SectionSpec:
    name: str
    priority: int  # lower is trimmed first
    share: float  # of the model's input budget


SECTIONS: tuple[SectionSpec, ...] = (
    SectionSpec("system", priority=7, share=0.03),
    SectionSpec("instructions", priority=4, share=0.02),
    SectionSpec("repo_map", priority=4, share=0.10),
    SectionSpec("reference_files", priority=3, share=0.10),
    SectionSpec("active_files", priority=5, share=0.40),
    SectionSpec("metadata", priority=2, share=0.05),
    SectionSpec("history", priority=1, share=0.25),
    SectionSpec("current_message", priority=6, share=0.05),
)


def section_breakdown(used: Mapping[str, int], input_budget: int) -> dict[str, dict[str, int]]:
    """{section: {tokens, allocated, priority}} for every section, in prompt order."""
    return {
        spec.name: {
            "tokens": int(used.get(spec.name, 0)),
            "allocated": int(spec.share * input_budget),
            "priority": spec.priority,
        }
        for spec in SECTIONS
    }


def default_compaction_trigger(input_budget: int) -> int:
    """History size at which compaction starts when the config names none: a sixth of
    the input budget (25k for a 200k-window model with a 50k output reserve, close to
    the seed's 24k), so that twice the trigger still leaves two thirds for everything else."""
    return max(1, input_budget // 6)
