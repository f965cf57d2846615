"""The generated route table matches the route modules, is plain data (one line per route), and
`import app` loads none of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from chalicelib.api import operation, route_index
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.route_table import ROUTES

ROOT = Path(__file__).resolve().parents[2]


def test_the_route_table_is_current() -> None:
    assert route_index.TABLE_PATH.read_text() == route_index.render(route_index.discover()), (
        "chalicelib/api/route_table.py is stale: run python -m chalicelib.api.route_index"
    )


def test_every_row_is_declared_by_its_module_with_its_family() -> None:
    route_index.discover()
    for row in ROUTES:
        entry = operation.bound(row.method, row.path)
        assert entry is not None, row
        assert (entry.module, entry.operation.family) == (row.module, ErrorFamily(row.family))


def test_routes_and_operation_ids_are_unique() -> None:
    keys = [(row.method, row.path) for row in ROUTES]
    assert len(keys) == len(set(keys))
    route_index.discover()
    ids = [operation.bound(row.method, row.path).operation.operation_id for row in ROUTES]  # type: ignore[union-attr]
    assert len(set(ids)) == len(ROUTES)


def test_the_table_is_one_line_of_plain_data_per_route() -> None:
    lines = route_index.TABLE_PATH.read_text().splitlines()
    rows = [line for line in lines if line.startswith('    ("')]
    assert len(rows) == len(ROUTES)
    for line, row in zip(rows, ROUTES, strict=True):
        assert line == "    (" + ", ".join(json.dumps(value) for value in row) + "),"
    # Every route takes any content type, so the table names none.
    assert "content_type" not in route_index.TABLE_PATH.read_text()


def test_the_middleware_learns_a_routes_family_from_its_row_importing_nothing() -> None:
    statement = (
        "import app, sys; from chalicelib.api.middleware import _family_of; "
        "assert _family_of('/v2/enqueue').value == 'pagerduty'; "
        "assert _family_of('/status/{slug}').value == 'public_html'; "
        "assert _family_of('/nowhere').value == 'api'"
    )
    loaded = _modules_after(statement)
    assert [m for m in loaded if m.startswith("chalicelib.api.routes.")] == ["chalicelib.api.routes.meta"]
    assert "pydantic" not in loaded


def test_the_check_mode_reports_a_stale_table(monkeypatch: object, tmp_path: Path) -> None:
    stale = tmp_path / "route_table.py"
    stale.write_text(route_index.render(route_index.discover()[:-1]))
    monkeypatch.setattr(route_index, "TABLE_PATH", stale)  # type: ignore[attr-defined]
    assert route_index.main(["--check"]) == 1
    stale.write_text(route_index.render(route_index.discover()))
    assert route_index.main(["--check"]) == 0


def _modules_after(statement: str) -> list[str]:
    script = f"import json, sys; {statement}; print(json.dumps(sorted(sys.modules)))"
    # A closed local port: whatever the request tries to reach fails at once, never AWS.
    environment = {**os.environ, "AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_MAX_ATTEMPTS": "1"}
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    loaded: list[str] = json.loads(completed.stdout.strip().splitlines()[-1])
    return loaded


def test_importing_the_app_loads_no_route_module_model_or_table() -> None:
    loaded = _modules_after("import app")
    route_modules = [m for m in loaded if m.startswith("chalicelib.api.routes.")]
    assert route_modules == ["chalicelib.api.routes.meta"]
    for heavy in ("pydantic", "pynamodb", "boto3", "chalicelib.incident", "chalicelib.workers.handlers"):
        assert heavy not in loaded, f"`import app` loads {heavy}"
    # Templates are compiled by the first page or email rendered, not by importing the app.
    for engine in ("jinja2", "markupsafe"):
        assert engine not in loaded, f"`import app` loads {engine}"


def test_a_first_request_loads_only_its_route_module() -> None:
    statement = (
        "import app; from chalice.test import Client; "
        "response = Client(app.app).http.get('/api/v1/incidents/INC-1'); "
        "assert response.status_code in (401, 503), response.status_code"  # no key: 401, or 503 if the
    )  # rate-limit store (a closed port here) is unreachable; either way the route ran.
    loaded = _modules_after(statement)
    route_modules = sorted(m for m in loaded if m.startswith("chalicelib.api.routes."))
    assert route_modules == ["chalicelib.api.routes.incidents", "chalicelib.api.routes.meta"]


def test_a_view_answers_the_middlewares_request_not_the_apps_shared_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local server answers on several threads and Chalice keeps one `current_request` per
    app: a view must use the request its own middleware call received (kept per thread)."""
    from chalice.app import Chalice

    from chalicelib.api import context, lazy, pipeline

    seen: list[object] = []
    row = ROUTES[0]
    entry = operation.BoundOperation(
        operation=operation.Operation(row.method, row.path, "anOperation", "", "t"),
        handler=lambda call: None,
        module=row.module,
    )
    monkeypatch.setattr(operation, "bound", lambda method, path: entry)
    monkeypatch.setattr(pipeline, "answer", lambda entry, request, path_params: seen.append(request))
    app = Chalice(app_name="race")
    app.current_request = "another thread's request"  # type: ignore[assignment]
    view = lazy._view(app, row)

    def answer(own: str) -> None:
        context.set_current_request(own)
        view()

    threads = [threading.Thread(target=answer, args=(f"request {n}",)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(seen) == ["request 0", "request 1", "request 2"]  # type: ignore[type-var]
