"""A small JSON-over-HTTP(S) server on 127.0.0.1 (a free port) for the vendor stand-ins: routes by
regular expression, a credential check, a request log, and 429s on demand (with Retry-After)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.importers.tls import Tls

Query = dict[str, list[str]]
Answer = tuple[int, Any, dict[str, str]]
Route = Callable[[re.Match[str], Query], Answer]


@dataclass
class Seen:
    method: str
    path: str
    query: Query
    status: int


@dataclass
class StandIn:
    """Subclasses fill `routes` and `authorized`; `start()` serves until `stop()`."""

    tls: Tls | None = None
    routes: list[tuple[re.Pattern[str], Route]] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    throttle: list[int] = field(default_factory=list)  # Retry-After of the next 429s to answer
    server: ThreadingHTTPServer | None = None

    def route(self, pattern: str, handler: Route) -> None:
        self.routes.append((re.compile(f"^{pattern}$"), handler))

    def authorized(self, header: str | None) -> bool:
        raise NotImplementedError

    def unauthorized(self) -> Answer:
        raise NotImplementedError

    def rate_limited(self, retry_after: int) -> Answer:
        return 429, {"error": {"message": "Rate Limit Exceeded", "code": 2020}}, {"Retry-After": str(retry_after)}

    def not_found(self, path: str) -> Answer:
        return 404, {"error": {"message": "Not Found", "code": 2100}}, {}

    def answer(self, method: str, target: str, authorization: str | None) -> Answer:
        parts = urlsplit(target)
        query = parse_qs(parts.query)
        if not self.authorized(authorization):
            result = self.unauthorized()
        elif self.throttle:
            result = self.rate_limited(self.throttle.pop(0))
        else:
            result = self.not_found(parts.path)
            for pattern, handler in self.routes:
                matched = pattern.match(parts.path)
                if matched and method == "GET":
                    result = handler(matched, query)
                    break
        self.seen.append(Seen(method, parts.path, query, result[0]))
        return result

    @property
    def base_url(self) -> str:
        assert self.server is not None
        scheme = "https" if self.tls else "http"
        host = "localhost" if self.tls else "127.0.0.1"
        return f"{scheme}://{host}:{self.server.server_address[1]}"

    def start(self) -> StandIn:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                status, body, headers = owner.answer(self.command, self.path, self.headers.get("Authorization"))
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = _serve
            do_POST = _serve

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if self.tls is not None:
            context = self.tls.server_context()
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def first(query: Query, name: str, default: str | None = None) -> str | None:
    values = query.get(name)
    return values[0] if values else default


def page(items: list[Any], query: Query, default_limit: int) -> tuple[list[Any], int, int, bool]:
    """One page: at most `default_limit` items whatever was asked (a server may answer with fewer,
    and the readers must follow the pages)."""
    limit = min(int(first(query, "limit", str(default_limit)) or default_limit), default_limit)
    offset = int(first(query, "offset", "0") or 0)
    chunk = items[offset : offset + limit]
    return chunk, limit, offset, offset + len(chunk) < len(items)
