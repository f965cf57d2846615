"""The `tocsin` command is a client of the public API: chalicelib/client imports nothing else of
chalicelib (it must run against any Tocsin, with no table, model or setting of the service), and
nothing of the service imports it."""

from __future__ import annotations

import ast
from pathlib import Path

from scripts.import_graph import edges

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "chalicelib" / "client"


def test_the_client_imports_only_itself_of_chalicelib() -> None:
    outside = []
    for path in sorted(CLIENT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + (
                    [f"{node.module}.{a.name}" for a in node.names] if node.module == "chalicelib" else []
                )
            for name in names:
                if name.startswith("chalicelib") and not name.startswith("chalicelib.client") and name != "chalicelib":
                    outside.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}")
    assert outside == []


def test_nothing_of_the_service_imports_the_client() -> None:
    assert [edge for edge in edges() if edge.target == "client"] == []
