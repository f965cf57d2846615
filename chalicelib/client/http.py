"""The one way the client talks to Tocsin: JSON over HTTP to /api/v1 with a bearer API key.

Envelopes are unwrapped (`data`), lists are followed page by page, 429 and 503 are retried after
the server's Retry-After (bounded), and every failure becomes an ApiError that says what was
asked and what the server answered, for a one-line message."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

# 429 is answered before the operation runs: always safe to repeat. 503 (storage stayed
# throttled) may come after part of a write: repeated only where a repeat cannot do it twice.
RETRIED_STATUSES = frozenset({429, 503})
MAX_ATTEMPTS = 5
MAX_WAIT_SECONDS = 30.0
PAGE_SIZE = 100
DEFAULT_TIMEOUT = 30.0


class Response(Protocol):
    status_code: int
    headers: Any
    text: str

    def json(self) -> Any: ...


class Transport(Protocol):
    """What the client needs of `requests.Session` (tests pass an in-process stand-in)."""

    def request(self, method: str, url: str, **kwargs: Any) -> Response: ...


class ClientError(Exception):
    """Any failure the command reports as one line and exit status 1."""


@dataclass
class ApiError(ClientError):
    method: str
    path: str
    status: int
    code: str | None  # None: the answer was not Tocsin's error envelope (a proxy's page, say)
    message: str
    details: Any = None

    def __str__(self) -> str:
        text = f"{self.method} {self.path}: {self.status} {self.code or 'error'}: {self.message}"
        fields = self.details.get("fields") if isinstance(self.details, dict) else None
        if isinstance(fields, list) and fields:
            named = "; ".join(f"{f.get('field')}: {f.get('message')}" for f in fields if isinstance(f, dict))
            text += f" ({named})"
        return text

    @property
    def unauthorized(self) -> bool:
        return self.status == 401


def _retry_after(response: Response, attempt: int) -> float:
    value = response.headers.get("Retry-After") if response.headers is not None else None
    try:
        seconds = float(value) if value is not None else float(2**attempt)
    except ValueError:
        seconds = float(2**attempt)
    return max(0.0, min(seconds, MAX_WAIT_SECONDS))


@dataclass
class Api:
    """A Tocsin API at `base_url` (the service root, e.g. http://localhost:8000) with one API key."""

    base_url: str
    key: str
    transport: Transport
    sleep: Callable[[float], None] = time.sleep
    timeout: float = DEFAULT_TIMEOUT
    calls: int = field(default=0)

    def _url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> Any:
        """The `data` of the answer; ApiError for any answer but 2xx (after retrying 429/5xx busy)."""
        headers = {"Authorization": f"Bearer {self.key}", "Accept": "application/json"}
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        kwargs: dict[str, Any] = {"headers": headers, "timeout": self.timeout}
        if body is not None:
            kwargs["json"] = body
        if params:
            kwargs["params"] = params
        # A POST without a key may have been done before its answer was lost.
        repeatable = method != "POST" or idempotency_key is not None
        for attempt in range(MAX_ATTEMPTS):
            self.calls += 1
            try:
                response = self.transport.request(method, self._url(path), **kwargs)
            except OSError as error:  # requests' ConnectionError and timeouts are OSErrors
                if repeatable and attempt + 1 < MAX_ATTEMPTS:
                    self.sleep(float(2**attempt))
                    continue
                raise ClientError(f"{method} {path}: cannot reach {self.base_url}: {error}") from error
            busy = response.status_code == 429 or (response.status_code in RETRIED_STATUSES and repeatable)
            if busy and attempt + 1 < MAX_ATTEMPTS:
                self.sleep(_retry_after(response, attempt))
                continue
            return self._data(method, path, response)
        raise AssertionError("unreachable")  # the last attempt returns or raises

    def _data(self, method: str, path: str, response: Response) -> Any:
        try:
            parsed = response.json()
        except ValueError:
            parsed = None
        if 200 <= response.status_code < 300:
            if isinstance(parsed, dict) and "data" in parsed:
                return parsed["data"]
            return parsed
        error = parsed.get("error") if isinstance(parsed, dict) else None
        if isinstance(error, dict):
            raise ApiError(
                method,
                path,
                response.status_code,
                str(error.get("code") or "ERROR"),
                str(error.get("message") or ""),
                error.get("details"),
            )
        raise ApiError(method, path, response.status_code, None, response.text[:200].strip())

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=params)

    def post(self, path: str, body: Any = None, *, idempotent: bool = False) -> Any:
        # A fresh key per create: a retry of this very call (429, a dropped connection) replays
        # the first answer instead of creating twice, where the route honours the header.
        key = f"tocsin-{uuid.uuid4().hex}" if idempotent else None
        return self.request("POST", path, body=body if body is not None else {}, idempotency_key=key)

    def patch(self, path: str, body: Any) -> Any:
        return self.request("PATCH", path, body=body)

    def put(self, path: str, body: Any = None) -> Any:
        return self.request("PUT", path, body=body)

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)

    def each(self, path: str, params: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        """Every item of a paginated list, following next_offset."""
        offset = 0
        while True:
            page = self.get(path, {**(params or {}), "limit": PAGE_SIZE, "offset": offset})
            yield from page.get("items", [])
            next_offset = page.get("next_offset")
            if not page.get("has_more") or next_offset is None:
                return
            offset = int(next_offset)

    def all(self, path: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return list(self.each(path, params))


def connect(base_url: str, key: str, transport: Transport | None = None) -> Api:
    if transport is None:
        import requests

        return Api(base_url=base_url, key=key, transport=cast(Transport, requests.Session()))
    return Api(base_url=base_url, key=key, transport=transport)
