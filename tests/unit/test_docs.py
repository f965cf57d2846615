"""The README and docs/ are read on GitHub: an unclosed code fence swallows every section after it."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_code_fence_is_closed(document: Path) -> None:
    open_at = None
    for number, line in enumerate(document.read_text().splitlines(), start=1):
        if line.lstrip().startswith("```"):
            open_at = None if open_at else number
    assert open_at is None, f"{document.name}: the code block opened on line {open_at} is never closed"


def test_no_heading_hides_inside_a_code_block() -> None:
    inside = False
    for number, line in enumerate((ROOT / "README.md").read_text().splitlines(), start=1):
        if line.lstrip().startswith("```"):
            inside = not inside
        assert not (inside and line.startswith("## ")), f"README.md line {number}: a heading inside a code block"
