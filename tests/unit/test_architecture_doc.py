"""docs/ARCHITECTURE.md names only modules that exist (issue 25 item 5): every backticked path
(`paging/fallback.py`, `client/importers/*_translate.py`, `templates/statuspage/feed_*.xml`) leads
to at least one file, read from chalicelib/ or the repository root, and every package of the layer
table is a package or module of chalicelib."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
PATH = re.compile(r"`([\w./*{}-]+\.(?:py|html|xml|css|txt|json|md|yaml|toml))`")
LAYER_ROW = re.compile(r"^\| (entry points|api|domains|store|base|client) \|(.*?)\|", re.M)
WORD = re.compile(r"`(\w+)`")


def named_paths(text: str) -> list[str]:
    return sorted(set(PATH.findall(text)))


def exists(name: str) -> bool:
    """A bare file name (a domain's `tables.py`) may be in any package."""
    pattern = name if "/" in name else f"**/{name}"
    return any(list(base.glob(pattern)) for base in (ROOT / "chalicelib", ROOT))


def _without_remarks(cell: str) -> str:
    while True:  # innermost first: a remark may hold a link's (target)
        shorter = re.sub(r"\([^()]*\)", "", cell)
        if shorter == cell:
            return cell
        cell = shorter


def layer_packages(text: str) -> list[str]:
    """The packages of the layer table (the first table whose rows are layers), without the
    parenthesized remarks."""
    start = LAYER_ROW.search(text)
    if start is None:
        return []
    table = text[start.start() : text.find("\n\n", start.start())]
    cells = [_without_remarks(cell) for _, cell in LAYER_ROW.findall(table)]
    return sorted({word for cell in cells for word in WORD.findall(cell)})


def test_every_module_the_architecture_names_exists() -> None:
    text = DOC.read_text()
    assert len(named_paths(text)) > 100  # the map names the modules, not a handful
    missing = [name for name in named_paths(text) if not exists(name)]
    assert missing == [], f"docs/ARCHITECTURE.md names files that do not exist: {missing}"


def test_every_package_of_the_layer_table_exists() -> None:
    packages = layer_packages(DOC.read_text())
    assert {"api", "incident", "store", "errors"} <= set(packages)
    missing = [
        name
        for name in packages
        if not (ROOT / "chalicelib" / name / "__init__.py").exists()
        and not (ROOT / "chalicelib" / f"{name}.py").exists()
    ]
    assert missing == [], f"the layer table names packages that do not exist: {missing}"


def test_the_check_finds_a_missing_module() -> None:
    assert named_paths("see `paging/fallback.py` and `nowhere/gone.py`") == ["nowhere/gone.py", "paging/fallback.py"]
    assert exists("paging/fallback.py")
    assert not exists("nowhere/gone.py")
    assert exists("client/importers/*_translate.py")
    assert layer_packages("| domains | `auth` → `nosuch` (the `tocsin` remark) | x |\n\n| api | `later` | y |") == [
        "auth",
        "nosuch",
    ]
