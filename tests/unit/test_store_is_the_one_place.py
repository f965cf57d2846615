"""The storage kernel stays the one place that knows how DynamoDB reports a false condition.

Outside chalicelib/store no module may mention `ConditionalCheckFailed` or catch PynamoDB's write
errors itself (in an `except` clause or `contextlib.suppress`): it uses chalicelib.store's
helpers (`save_if`, `update_if`, `delete_if`, `put_if_absent`, `conditional`, `best_effort`,
`Transaction` and `TransactionCancelled`) instead.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNEL = ROOT / "chalicelib" / "store"
WRITE_ERRORS = {"PutError", "UpdateError", "DeleteError", "TransactWriteError"}
CODE_WORD = "ConditionalCheckFailed"
# Known, reasoned exceptions. Each must still break the rule (see the test below), so an entry is
# removed once its module is migrated.
PENDING: dict[str, str] = {}


def production_sources() -> Iterator[Path]:
    yield ROOT / "app.py"
    for folder in ("chalicelib", "bench", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if KERNEL not in path.parents:
                yield path


def _names(node: ast.AST | None) -> set[str]:
    """The class names an exception expression mentions: `PutError`, `exceptions.PutError`, tuples."""
    if node is None:
        return set()
    found = set()
    for part in ast.walk(node):
        if isinstance(part, ast.Name):
            found.add(part.id)
        elif isinstance(part, ast.Attribute):
            found.add(part.attr)
    return found


def _is_suppress(call: ast.Call) -> bool:
    function = call.func
    return (isinstance(function, ast.Name) and function.id == "suppress") or (
        isinstance(function, ast.Attribute) and function.attr == "suppress"
    )


def violations(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    found = []
    if CODE_WORD in source:
        found.append(f"mentions {CODE_WORD}")
    for node in ast.walk(ast.parse(source, filename=str(path))):
        caught: set[str] = set()
        if isinstance(node, ast.ExceptHandler):
            caught = _names(node.type) & WRITE_ERRORS
        elif isinstance(node, ast.Call) and _is_suppress(node):
            caught = set().union(*(_names(argument) for argument in node.args)) & WRITE_ERRORS
        found.extend(f"line {getattr(node, 'lineno', 0)}: catches {name}" for name in sorted(caught))
    return found


def test_no_module_outside_the_kernel_reads_condition_failures_itself() -> None:
    offenders = {
        str(path.relative_to(ROOT)): found
        for path in production_sources()
        if (found := violations(path)) and str(path.relative_to(ROOT)) not in PENDING
    }
    assert offenders == {}, "use chalicelib.store (save_if/update_if/delete_if/conditional/best_effort) instead"


def test_every_pending_exception_is_still_needed() -> None:
    for relative in PENDING:
        path = ROOT / relative
        assert not path.exists() or violations(path), f"{relative} follows the rule now: remove it from PENDING"


def test_the_check_sees_what_it_forbids(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import contextlib\n"
        "from pynamodb import exceptions\n"
        "try:\n    pass\nexcept (ValueError, exceptions.UpdateError):\n    pass\n"
        "with contextlib.suppress(DeleteError):\n    pass\n"
        "code = 'ConditionalCheckFailedException'\n"
    )
    assert violations(sample) == [
        "mentions ConditionalCheckFailed",
        "line 5: catches UpdateError",
        "line 7: catches DeleteError",
    ]


def test_the_kernel_imports_only_base_modules() -> None:
    """store sits below the domains: it may use aws, settings, clock and errors, no domain."""
    allowed = {"aws", "settings", "clock", "errors", "store"}
    imported = set()
    for path in sorted(KERNEL.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("chalicelib"):
                names = [node.module] if node.module != "chalicelib" else [f"chalicelib.{a.name}" for a in node.names]
                imported.update(name.split(".")[1] for name in names if "." in name)
            elif isinstance(node, ast.Import):
                imported.update(a.name.split(".")[1] for a in node.names if a.name.startswith("chalicelib."))
    assert imported <= allowed, imported - allowed
