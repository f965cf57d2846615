"""Fixtures of the API tests that need more than tests/conftest.py gives every test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def local_routes() -> Iterator[None]:
    """The local server's /local routes, mounted on the app for one test: the app alone has none
    (only chalicelib/local/server.py mounts them). Mounted before the test client's first request,
    which is when its route matcher reads the app's routes."""
    from app import app
    from chalicelib.local import routes

    routes.mount(app)
    yield
    routes.unmount(app)


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    """The OpenAPI document the app serves (built once per module)."""
    from chalice.test import Client

    from app import app
    from chalicelib.settings import get_settings, reset_settings

    reset_settings()
    get_settings()
    with Client(app) as client:
        parsed: dict[str, Any] = json.loads(client.http.get("/api/v1/openapi.json").body)
    reset_settings()
    return parsed
