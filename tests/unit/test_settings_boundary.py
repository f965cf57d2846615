"""Settings are read once, at the entry points, and handed down (issue 25): no domain module reads
them itself. `get_settings()` stays the one cached reader (chalicelib/settings.py); only the
modules below may import it, each an entry point of its own."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ENTRY_POINTS = {
    # The reader itself.
    "chalicelib/settings.py",
    # Every routed request: builds the Inbound (and from it the Call, the console's Ctx) with the
    # settings read once for the request.
    "chalicelib/api/pipeline.py",
    # Chalice's own answers (405, bad JSON) and unrouted requests never reach the pipeline.
    "chalicelib/api/middleware.py",
    # Chalice views outside the operation pipeline: the OpenAPI document and the catch-all 404.
    "chalicelib/api/routes/meta.py",
    # One SQS batch: read once, handed to every consumer.
    "chalicelib/workers/dispatch.py",
    # The EventBridge functions: read once per invocation.
    "chalicelib/workers/scheduled.py",
    # The `tocsin` command line.
    "chalicelib/cli.py",
    # Bootstrap: the clients and tables bound from the settings.
    "chalicelib/aws.py",
}
# The local stage's runner, demo data and sinks (`make run`): its own entry points, never deployed.
ENTRY_PACKAGES = ("chalicelib/local/",)


def _allowed(relative: str) -> bool:
    return relative in ENTRY_POINTS or relative.startswith(ENTRY_PACKAGES)


def _reads_of_the_settings(source: str) -> list[int]:
    """Lines that import the reader or reach it through its module (`settings.get_settings`)."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == "chalicelib.settings":
            lines += [node.lineno for alias in node.names if alias.name == "get_settings"]
        elif isinstance(node, ast.Attribute) and node.attr == "get_settings":
            lines.append(node.lineno)
    return lines


def test_only_the_entry_points_read_the_settings() -> None:
    files = [*sorted((ROOT / "chalicelib").rglob("*.py")), ROOT / "app.py"]
    offenders = [
        f"{relative}:{line}"
        for path in files
        if not _allowed(relative := path.relative_to(ROOT).as_posix())
        for line in _reads_of_the_settings(path.read_text())
    ]
    assert offenders == [], "pass the settings (or the value needed) down from the entry point instead"


def test_the_check_sees_an_import_a_module_reach_and_a_local_import() -> None:
    source = (
        "from chalicelib.settings import Settings, get_settings\n"
        "from chalicelib import settings\n"
        "def f() -> None:\n"
        "    from chalicelib.settings import get_settings as read\n"
        "    settings.get_settings()\n"
    )
    assert _reads_of_the_settings(source) == [1, 4, 5]
    assert _reads_of_the_settings("from chalicelib.settings import Settings\n") == []


def test_the_entry_points_named_exist() -> None:
    # A renamed or moved entry point must not leave a stale allowance behind.
    assert all((ROOT / relative).is_file() for relative in ENTRY_POINTS)
    assert all((ROOT / package).is_dir() for package in ENTRY_PACKAGES)
