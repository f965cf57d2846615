"""The README and docs/ are read on GitHub: an unclosed code fence swallows every section after it,
and a link to a moved file or a renamed heading leads nowhere. The README stays a five-minute read."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
DOCUMENTS = [README, *sorted(DOCS.glob("*.md"))]
README_MAX_LINES = 250

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# [text](target "title") and ![alt](target); the text may hold one level of brackets.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^\s)>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")
CODE_SPAN = re.compile(r"(`+)[\s\S]*?\1")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks; a fence closes on the same character, at least as long."""
    lines: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = FENCE.match(line)
        if match:
            marker = match.group(1)
            if fence is None:
                fence = marker
                continue
            if marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip()[len(marker) :].strip():
                fence = None
                continue
        if fence is None:
            lines.append((number, line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text, lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading anchors on its text
    text = text.replace("`", "").replace("*", "")
    kept = "".join(
        char
        for char in text.lower()
        if char in " -_" or unicodedata.category(char)[0] in ("L", "N") or unicodedata.category(char) == "Mn"
    )
    return kept.replace(" ", "-")


def anchors(document: Path) -> set[str]:
    """Every anchor a document offers: its headings (repeats get -1, -2, ... as on GitHub) and HTML anchors."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in prose_lines(document.read_text()):
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        found.update(HTML_ANCHOR.findall(line))
    return found


def link_targets(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every Markdown link outside code blocks and code spans."""
    targets: list[tuple[int, str]] = []
    paragraph: list[tuple[int, str]] = []

    def flush() -> None:
        # Code spans may wrap across lines of one paragraph, never across paragraphs.
        if not paragraph:
            return
        joined = "\n".join(line for _, line in paragraph)
        first = paragraph[0][0]
        without_code = CODE_SPAN.sub(lambda span: "\n" * span.group(0).count("\n"), joined)
        for offset, line in enumerate(without_code.split("\n")):
            targets.extend((first + offset, target) for target in INLINE_LINK.findall(line))
            reference = REFERENCE_LINK.match(line)
            if reference:
                targets.append((first + offset, reference.group(1)))
        paragraph.clear()

    previous = 0
    for number, line in prose_lines(text):
        if not line.strip() or number != previous + 1:
            flush()
        if line.strip():
            paragraph.append((number, line))
        previous = number
    flush()
    return targets


def broken_links(document: Path, root: Path = ROOT) -> list[str]:
    problems: list[str] = []
    for number, target in link_targets(document.read_text()):
        if SCHEME.match(target) or target.startswith("//"):
            continue  # a web address: not this repository's to check
        path_part, _, anchor = target.partition("#")
        linked = document if not path_part else (document.parent / path_part).resolve()
        where = f"{document.relative_to(root)}:{number}: {target}"
        if not linked.exists():
            problems.append(f"{where} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            problems.append(f"{where} (no heading with that anchor in {linked.name})")
    return problems


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_code_fence_is_closed(document: Path) -> None:
    open_at = None
    for number, line in enumerate(document.read_text().splitlines(), start=1):
        if line.lstrip().startswith("```"):
            open_at = None if open_at else number
    assert open_at is None, f"{document.name}: the code block opened on line {open_at} is never closed"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_no_heading_hides_inside_a_code_block(document: Path) -> None:
    inside = False
    for number, line in enumerate(document.read_text().splitlines(), start=1):
        if line.lstrip().startswith("```"):
            inside = not inside
        assert not (inside and line.startswith("## ")), f"{document.name} line {number}: a heading inside a code block"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(document: Path) -> None:
    assert broken_links(document) == []


def test_the_readme_is_a_five_minute_read() -> None:
    lines = len(README.read_text().splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move detail to docs/ (at most {README_MAX_LINES})"


def test_the_readme_lists_every_topic_document() -> None:
    linked = {target.partition("#")[0] for _, target in link_targets(README.read_text())}
    unlisted = [f"docs/{path.name}" for path in sorted(DOCS.glob("*.md")) if f"docs/{path.name}" not in linked]
    assert unlisted == [], f"README.md's 'Where is what' does not link {unlisted}"


def test_the_link_checker_finds_what_it_should(tmp_path: Path) -> None:
    """The checks above pass vacuously if the parser misses links; prove it sees each kind."""
    (tmp_path / "other.md").write_text("# Other page\n\n## Café & `code` (v2)\n\n## Twice\n\n## Twice\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n"
        "[fine](other.md#café--code-v2) [second twice](other.md#twice-1) [self](#page)\n"
        "[gone](missing.md) [bad anchor](other.md#nowhere) ![image](missing.png)\n"
        "`[in a span](ignored.md)` and [web](https://example.com/x.md)\n\n"
        "```sh\n[in a block](ignored-too.md)\n```\n\n"
        "[ref]: also-missing.md\n"
    )
    problems = broken_links(page, root=tmp_path)
    assert [problem.split(" (")[0] for problem in problems] == [
        "page.md:4: missing.md",
        "page.md:4: other.md#nowhere",
        "page.md:4: missing.png",
        "page.md:11: also-missing.md",
    ]
    assert slug("Inbound integrations: every monitoring tool can open and close incidents") == (
        "inbound-integrations-every-monitoring-tool-can-open-and-close-incidents"
    )
    assert slug("Sessions (JWT)") == "sessions-jwt"
