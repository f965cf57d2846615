"""Fixtures of the API tests that need more than tests/conftest.py gives every test."""

from __future__ import annotations

from collections.abc import Iterator

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
