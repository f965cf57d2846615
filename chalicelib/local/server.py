"""The HTTP API served locally, through Chalice's local gateway, tuned to behave like API Gateway.

The local server is the only place the /local routes (chalicelib/local/routes.py) are mounted.
Every answer is the app's or an error envelope: a method the standard library's server does not
know goes through the app like any other (Chalice answers 405 with Allow, the middleware envelopes
it), and what the server refuses before routing (a request line over 64 KiB, headers too large, a
malformed request line) is enveloped here instead of its HTML error page."""

from __future__ import annotations

import json
import threading
from typing import Any

from chalice.app import Chalice
from chalice.config import Config
from chalice.local import ChaliceRequestHandler, LocalDevServer, LocalGateway, RouteMatcher

from chalicelib.api import envelope
from chalicelib.api.context import accept_or_generate_request_id, set_request_id
from chalicelib.errors import AppError, HeadersTooLarge, InternalError, NotFound, UriTooLong, ValidationFailed
from chalicelib.local import routes as local_routes


class TocsinRequestHandler(ChaliceRequestHandler):
    # Without this, keep-alive clients stall ~40 ms per request (Nagle + delayed ACK).
    disable_nagle_algorithm = True

    def __init__(self, request: Any, client_address: Any, server: Any, app_object: Chalice, config: Config) -> None:
        self._app_object = app_object
        super().__init__(request, client_address, server, app_object=app_object, config=config)

    def _generic_handle(self) -> None:
        # API Gateway reports the real caller; chalice local hard-codes 127.0.0.1.
        self.local_gateway.event_converter.LOCAL_SOURCE_IP = self.client_address[0]
        if not _route_exists(self.local_gateway, self.path):
            self._send_not_found()
            return
        super()._generic_handle()

    # The base class binds do_* to its own _generic_handle at class creation; rebind to ours.
    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = do_PATCH = do_OPTIONS = _generic_handle

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        # http.server answers 501 to a method without a do_* handler; API Gateway hands any method
        # to the app, which answers 405 (or 404 on no route) in the envelope.
        if not hasattr(self, f"do_{self.command}"):
            setattr(self, f"do_{self.command}", self._generic_handle)
        return True

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """What http.server refuses before routing, as an error envelope instead of an HTML page."""
        set_request_id(accept_or_generate_request_id(None))
        response = envelope.error_response(_protocol_error(code, message))
        body = response.body if isinstance(response.body, str) else json.dumps(response.body)
        payload = body.encode()
        self.send_response(response.status_code)
        for name, value in response.headers.items():
            self.send_header(name, str(value))
        # The rest of the request was not read: the connection cannot carry another one.
        self.send_header("Connection", "close")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.close_connection = True
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _send_not_found(self) -> None:
        # On AWS the greedy /{proxy+} route answers; chalice local cannot match it across segments.
        headers, _ = self._parse_payload()
        set_request_id(accept_or_generate_request_id(headers.get("X-Request-Id") or headers.get("x-request-id")))
        path = self.path.split("?")[0]
        response = envelope.error_response(NotFound(f"No route matches {path}."))
        body = response.body if isinstance(response.body, str) else json.dumps(response.body)
        self._send_http_response(404, dict(response.headers), body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the app logs every request as JSON already


def _protocol_error(status: int, message: str | None) -> AppError:
    if status == 414:
        return UriTooLong()
    if status == 431:
        return HeadersTooLarge()
    if status >= 500 and status != 505:
        return InternalError()
    return ValidationFailed(f"The HTTP request is malformed: {message or status}.")


def _route_exists(gateway: LocalGateway, path: str) -> bool:
    matcher: RouteMatcher = gateway.event_converter._route_matcher
    try:
        matched = matcher.match_route(path)
    except ValueError:
        return False
    return bool(matched.route != "/{proxy+}" or path.split("?")[0].count("/") == 1)


def start_server(app: Chalice, host: str, port: int) -> tuple[LocalDevServer, threading.Thread]:
    """Serve the app, with the /local routes mounted on it first (the gateway's route matcher reads
    the app's routes once, here)."""
    local_routes.mount(app)
    config = Config(chalice_stage="local", user_provided_params={}, config_from_disk={})
    server = LocalDevServer(app, config, host, port, handler_cls=TocsinRequestHandler)
    # A keep-alive client's handler thread waits for its next request as long as the client keeps
    # the connection open; stopping must not wait for it (server_close joins such threads).
    server.server.daemon_threads = True
    server.server.block_on_close = False
    thread = threading.Thread(target=server.server.serve_forever, name="http", daemon=True)
    thread.start()
    return server, thread
