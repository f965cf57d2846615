"""The packages form layers (entry points -> api -> domains -> store -> base) with no cycles.

Every import counts, function-local ones too (scripts/import_graph.py; docs/ARCHITECTURE.md).
"""

from __future__ import annotations

from pathlib import Path

from scripts import import_graph


def test_chalicelib_keeps_its_layers_and_has_no_cycle() -> None:
    assert import_graph.check() == []


def test_domain_models_do_not_import_the_api_layer() -> None:
    offenders = [
        edge
        for edge in import_graph.edges()
        if import_graph.LAYER_OF.get(edge.source, 99) < import_graph.LAYER_OF["api"] and edge.target == "api"
    ]
    assert offenders == []


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "chalicelib" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_check_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "incident/__init__.py": "",
            "incident/service.py": "from chalicelib.directory import users\n",
            "directory/__init__.py": "",
            "directory/users.py": "def f():\n    from chalicelib.incident import service\n",
        },
    )
    problems = import_graph.check(root)
    assert any(p.startswith("cycle between directory, incident") for p in problems), problems


def test_the_check_finds_an_upward_import_and_an_unplaced_package(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "errors.py": "from chalicelib import settings\nimport chalicelib.api.envelope\n",
            "settings.py": "",
            "api/__init__.py": "",
            "api/envelope.py": "",
            "gadgets/__init__.py": "",
        },
    )
    problems = import_graph.check(root)
    assert any(
        p.startswith("errors (base) imports api (api), a higher layer: chalicelib/errors.py:2") for p in problems
    )
    assert "gadgets: in no layer (place it in scripts/import_graph.py LAYERS)" in problems
    assert not any("settings" in p for p in problems)
