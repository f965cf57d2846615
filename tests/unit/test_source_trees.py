"""Parsed source trees are reused while their file is unchanged, and parsed again after a change."""

from __future__ import annotations

import ast
from pathlib import Path

from chalicelib.deploy.source_trees import parsed


def test_a_file_is_parsed_once_until_it_changes(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("import os\n")
    first = parsed(module)
    assert parsed(module) is first
    assert [type(node).__name__ for node in first.body] == ["Import"]

    module.write_text("import os\nimport sys\n")
    changed = parsed(module)
    assert changed is not first
    assert [alias.name for node in changed.body if isinstance(node, ast.Import) for alias in node.names] == [
        "os",
        "sys",
    ]
