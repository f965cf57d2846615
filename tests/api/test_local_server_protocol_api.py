"""What the local HTTP server answers before (or instead of) routing: unknown methods, request lines
too long, bad request lines. Always a JSON error envelope, never the standard library's HTML page;
and what Chalice answers itself on API Gateway (405 on a route) is enveloped in the route's family."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import Org, reconfigure


@pytest.fixture
def served(aws_env: None) -> Iterator[int]:
    from app import app
    from chalicelib.local import routes as local_routes
    from chalicelib.local.emulator import free_port
    from chalicelib.local.server import start_server

    port = free_port()
    reconfigure(PUBLIC_BASE_URL=f"http://127.0.0.1:{port}")
    server, _ = start_server(app, "127.0.0.1", port)
    yield port
    server.server.shutdown()
    server.server.server_close()
    local_routes.unmount(app)


def request(port: int, method: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


def envelope_error(headers: Any, body: bytes) -> dict[str, Any]:
    assert headers["Content-Type"] == "application/json", body[:200]
    document = json.loads(body)
    assert document["success"] is False
    assert document["meta"]["request_id"] == headers["X-Request-Id"]
    error: dict[str, Any] = document["error"]
    return error


@pytest.mark.parametrize("method", ["TRACE", "CONNECT", "PROPFIND", "FOO"])
def test_an_unknown_method_on_a_route_is_an_enveloped_405_with_allow(served: int, org: Org, method: str) -> None:
    status, headers, body = request(served, method, "/api/v1/incidents", {"Authorization": f"Bearer {org.owner_key}"})
    assert status == 405
    assert envelope_error(headers, body)["code"] == "METHOD_NOT_ALLOWED"
    assert set(headers["Allow"].replace(" ", "").split(",")) == {"GET", "POST"}


def test_an_unknown_method_on_no_route_is_an_enveloped_404(served: int) -> None:
    status, headers, body = request(served, "TRACE", "/nope")
    assert status == 404
    assert envelope_error(headers, body)["code"] == "NOT_FOUND"


def test_a_100_kb_query_is_an_enveloped_414(served: int, org: Org) -> None:
    status, headers, body = request(served, "GET", "/api/v1/incidents?q=" + "a" * 100_000)
    assert status == 414
    error = envelope_error(headers, body)
    assert error["code"] == "URI_TOO_LONG"
    assert headers["Connection"] == "close"


def test_a_malformed_request_line_is_an_enveloped_400(served: int) -> None:
    with socket.create_connection(("127.0.0.1", served), timeout=10) as raw:
        raw.sendall(b"GET /api/v1/incidents extra HTTP/1.1\r\n\r\n")  # three words, not two
        answer = b""
        while chunk := raw.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b" ")[1] == b"400"
    assert b"application/json" in head
    assert json.loads(body)["success"] is False


# --- the same answers through Chalice's own routing (API Gateway + Lambda) ------------------------


def bare_405(document: dict[str, Any]) -> bool:
    return document["error"]["code"] == "METHOD_NOT_ALLOWED" and "meta" not in document


@pytest.mark.parametrize(
    ("path", "status", "family_check"),
    [
        # A method the route lacks is HTTP's 405 (with Allow), in PagerDuty's error shape.
        ("/v2/enqueue", 405, lambda document: document["status"] == "invalid event"),
        ("/webhooks/abc", 405, bare_405),
        ("/status/acme/summary.json", 405, bare_405),
    ],
)
def test_chalices_own_405_is_answered_in_the_routes_family(
    client: Any, path: str, status: int, family_check: Any
) -> None:
    response = client.http.request(method="TRACE", path=path, headers={})
    assert response.status_code == status
    document = json.loads(response.body)
    assert "Code" not in document  # not Chalice's own {"Code", "Message"}
    assert family_check(document)
    assert response.headers["Allow"]


def test_chalices_405_on_the_catch_all_is_an_enveloped_404(client: Any) -> None:
    response = client.http.request(method="TRACE", path="/nope", headers={})
    assert response.status_code == 404
    assert json.loads(response.body)["error"]["code"] == "NOT_FOUND"


def test_stopping_does_not_wait_for_an_idle_keep_alive_client(aws_env: None) -> None:
    """`make run`'s Ctrl-C closes the server while a client (a browser, a requests.Session) still
    holds a keep-alive connection: closing must not wait for that client to hang up."""
    import threading

    from app import app
    from chalicelib.local import routes as local_routes
    from chalicelib.local.emulator import free_port
    from chalicelib.local.server import start_server

    port = free_port()
    server, _ = start_server(app, "127.0.0.1", port)
    keep_alive = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        keep_alive.request("GET", "/api/v1/openapi.json")
        keep_alive.getresponse().read()  # the connection stays open, its handler thread waiting
        closed = threading.Event()

        def close() -> None:
            server.server.shutdown()
            server.server.server_close()
            closed.set()

        threading.Thread(target=close, daemon=True).start()
        assert closed.wait(5), "server_close waited for the idle keep-alive connection"
    finally:
        keep_alive.close()
        local_routes.unmount(app)
