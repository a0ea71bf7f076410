"""The README and the pages under docs/: what a reader relies on stays true.

The README stays short enough to read on arrival, and keeps `make test` as the test command.
Every relative link in the README and docs/*.md names a file that exists, and an #anchor
names a heading of that file (GitHub's slugs). docs/settings.md names every `ACDC_` variable
the code reads, except the few that are not settings a person sets (listed below, with why).
Non-goals: checking links to other sites, or the prose itself.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SETTINGS_PAGE = DOCS / "settings.md"
CODE = ("acdc", "chat", "history", "contextcore")
README_MOST_LINES = 250
SETTING = re.compile(r"ACDC_[A-Z0-9_]+")

# Names the code holds that are not settings a person sets (docs/settings.md mentions them
# under "For tests", but is not required to):
NOT_SETTINGS = {
    # A Django setting `acdc serve` fills in for its run; never read from the environment.
    "ACDC_RUN_TOKEN",
    # A test hook: the edit journal kills its own process after this many renames.
    "ACDC_TEST_KILL_AFTER_RENAMES",
}

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def _prose_lines(text: str) -> list[str]:
    """The text's lines with fenced code blocks blanked out."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            lines.append("")
        else:
            lines.append("" if fenced else line)
    return lines


def _outside_code(text: str) -> str:
    """The text without fenced blocks and inline code spans (which may cross lines)."""
    paragraphs = "\n".join(_prose_lines(text)).split("\n\n")
    return "\n\n".join(re.sub(r"`[^`]*`", "", p) for p in paragraphs)


def _slugs(page: Path) -> set[str]:
    """The anchors GitHub makes for the page's headings (a repeated one gets -1, -2, …)."""
    seen: dict[str, int] = {}
    slugs = set()
    for line in _prose_lines(page.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", match.group(1))
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        slugs.add(slug if count == 0 else f"{slug}-{count}")
    return slugs


def _broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(_outside_code(page.read_text(encoding="utf-8"))):
        if SCHEME.match(target):
            continue  # another site: not checked here
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{page.name}: {target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in _slugs(linked):
            broken.append(f"{page.name}: {target} (no such heading in {linked.name})")
    return broken


def _names_in_code() -> set[str]:
    names: set[str] = set()
    for package in CODE:
        for source in (ROOT / package).rglob("*.py"):
            names.update(SETTING.findall(source.read_text(encoding="utf-8")))
    return names


def test_the_readme_fits_in_250_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MOST_LINES, f"README.md has {len(lines)} lines"


def test_the_readme_keeps_make_test_as_the_test_command():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert any(line.split("#")[0].strip() == "make test" for line in lines)


def test_every_relative_link_in_the_readme_and_docs_resolves():
    assert DOCS.is_dir(), "docs/ is missing"
    broken = [problem for page in _pages() for problem in _broken_links(page)]
    assert broken == []


def test_the_settings_page_names_every_setting_the_code_reads():
    read = _names_in_code()
    assert not NOT_SETTINGS - read, f"no longer in the code: {sorted(NOT_SETTINGS - read)}"
    assert SETTINGS_PAGE.exists(), "docs/settings.md is missing"
    named = set(SETTING.findall(SETTINGS_PAGE.read_text(encoding="utf-8")))
    assert sorted(read - NOT_SETTINGS - named) == []
