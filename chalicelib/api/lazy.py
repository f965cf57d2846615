"""Mount the API on the Chalice app from the generated route table, importing route modules lazily.

Chalice needs every route at import time, but a route's module (its models, services, tables)
is only needed when a request reaches it. So app.py registers a small view per row of
chalicelib.api.route_table, and the first request to a route imports the module that declares it.
A cold Lambda pays for the modules its first requests use, not for the whole API.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from chalice.app import Chalice, Response

from chalicelib.api import context
from chalicelib.api.route_table import ROUTES, RouteRow


def mount(app: Chalice) -> None:
    for row in ROUTES:
        app.route(row.path, methods=[row.method], content_types=list(row.content_types))(_view(app, row))


def load_all() -> None:
    """Import every route module (the OpenAPI document describes them all)."""
    for module in sorted({row.module for row in ROUTES}):
        importlib.import_module(module)


def _view(app: Chalice, row: RouteRow) -> Callable[..., Response]:
    def view(**path_params: str) -> Response:
        from chalicelib.api import routing

        entry = routing.bound(row.method, row.path)
        if entry is None:
            importlib.import_module(row.module)
            entry = routing.bound(row.method, row.path)
        if entry is None:
            # Only a stale table gets here, and tests/unit/test_route_table.py fails first.
            raise RuntimeError(f"{row.module} does not declare {row.method} {row.path}: regenerate the route table")
        # The middleware's request, not app.current_request: that one attribute is shared by the
        # local server's threads (and the first request to a route spends a while importing).
        request = context.current_request() or app.current_request
        assert request is not None  # Chalice sets it before calling any view
        return entry.view(request, path_params)

    view.__name__ = row.operation_id
    return view
