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


def test_the_check_finds_a_cycle_between_two_modules_of_one_package(tmp_path: Path) -> None:
    """No cycle is allowed at any level: two modules of one package importing each other (one of
    them in a function) is a cycle, though the package graph sees no edge at all."""
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "api/__init__.py": "",
            "api/lazy.py": "def view():\n    from chalicelib.api import routing\n",
            "api/routing.py": "def operations():\n    from chalicelib.api.lazy import load_all\n",
            "api/envelope.py": "from chalicelib.api import routing\n",
        },
    )
    problems = import_graph.check(root)
    assert [p.split(":")[0] for p in problems] == ["module cycle between api.lazy, api.routing"], problems
    assert "api.lazy->api.routing (chalicelib/api/lazy.py:2)" in problems[0]


def test_module_edges_name_the_module_a_from_import_loads(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "errors.py": "",
            "api/__init__.py": "",
            "api/lazy.py": "from chalicelib import errors\nfrom chalicelib.api import envelope\n",
            "api/envelope.py": "from chalicelib.errors import AppError\nimport chalicelib.api.lazy\n",
        },
    )
    found = {(edge.source, edge.target) for edge in import_graph.module_edges(root)}
    assert found == {
        ("api.lazy", "errors"),
        ("api.lazy", "api.envelope"),
        ("api.lazy", "api"),
        ("api.envelope", "errors"),
        ("api.envelope", "api.lazy"),
    }


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
