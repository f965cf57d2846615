"""Mount the API on the Chalice app from the generated route table, importing route modules lazily.

Chalice needs every route at import time, but a route's module (its models, services, tables)
is only needed when a request reaches it. So app.py registers a small view per row of
chalicelib.api.route_table, and the first request to a route imports the module that declares it.
A cold Lambda pays for the modules its first requests use, not for the whole API.

Routes outside the table (the local server's /local routes, chalicelib/local/routes.py) are
mounted by their owner with mount_extra, through the same views. Every view hands its request to
the one pipeline (chalicelib.api.pipeline).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from chalice.app import Chalice, Response

from chalicelib.api import context
from chalicelib.api.route_table import ROUTES, RouteRow

if TYPE_CHECKING:
    from chalicelib.api.operation import Operation

# Every route accepts any body type: the operation's pipeline decides (SNS posts JSON as text/plain).
CONTENT_TYPES = ["*/*"]

# Routes mounted beyond the table, by the code that owns them (the local server mounts its /local
# routes at startup); keyed by (method, path). The OpenAPI document lists them while mounted.
_EXTRA: dict[tuple[str, str], RouteRow] = {}


def mount(app: Chalice) -> None:
    for row in ROUTES:
        _route(app, row)


def mount_extra(app: Chalice, rows: list[RouteRow]) -> None:
    """Mount routes that are not in the table, with the same view, middleware and envelope as its
    routes. Mounting a row twice is a no-op."""
    for row in rows:
        if (row.method, row.path) not in _EXTRA:
            _route(app, row)
            _EXTRA[(row.method, row.path)] = row


def unmount_extra(app: Chalice, rows: list[RouteRow]) -> None:
    """Take routes mount_extra added off the app again (tests mount the local routes for a while)."""
    for row in rows:
        if _EXTRA.pop((row.method, row.path), None) is None:
            continue
        methods = app.routes.get(row.path, {})
        methods.pop(row.method, None)
        if not methods:
            app.routes.pop(row.path, None)


def mounted_rows() -> list[RouteRow]:
    """The table's routes, then those mounted beyond it."""
    return [*ROUTES, *_EXTRA.values()]


def extra_rows() -> list[RouteRow]:
    return list(_EXTRA.values())


def load_all() -> None:
    """Import every route module (the OpenAPI document describes them all)."""
    for module in sorted({row.module for row in mounted_rows()}):
        importlib.import_module(module)


def documented_operations() -> list[Operation]:
    """Every documented mounted operation: the route table's and those mounted beyond it (the local
    server's), the console's pages aside. Imports the route modules not loaded yet (for the
    OpenAPI document)."""
    from chalicelib.api import operation

    load_all()
    mounted = {(row.method, row.path) for row in mounted_rows()}
    return [
        entry.operation
        for entry in operation.bound_operations()
        if (entry.operation.method, entry.operation.path) in mounted and entry.operation.documented
    ]


def _route(app: Chalice, row: RouteRow) -> None:
    app.route(row.path, methods=[row.method], content_types=CONTENT_TYPES)(_view(app, row))


def _view(app: Chalice, row: RouteRow) -> Callable[..., Response]:
    def view(**path_params: str) -> Response:
        from chalicelib import aws
        from chalicelib.api import operation, pipeline

        entry = operation.bound(row.method, row.path)
        if entry is None:
            importlib.import_module(row.module)
            entry = operation.bound(row.method, row.path)
        if entry is None:
            # Only a stale table gets here, and tests/unit/test_route_table.py fails first.
            raise RuntimeError(f"{row.module} does not declare {row.method} {row.path}: regenerate the route table")
        # The middleware's request, not app.current_request: that one attribute is shared by the
        # local server's threads (and the first request to a route spends a while importing).
        request = context.current_request() or app.current_request
        assert request is not None  # Chalice sets it before calling any view
        aws.bind_tables()  # the request's entry point binds the tables once (a no-op after the first)
        return pipeline.answer(entry, request, path_params)

    # Chalice names a view in its own messages only; the route's method and path say which it is.
    view.__name__ = f"{row.method} {row.path}"
    return view
