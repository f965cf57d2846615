"""Per-request context (the request and its id), set by the middleware, read by views and logs.

`Chalice.current_request` is one attribute of the app, shared by every thread: the local server
answers requests on several threads at once, so a view reading it could see another request's.
The middleware receives its own request and keeps it here, per thread/context."""

from __future__ import annotations

import contextvars
import re
import time
import uuid
from typing import Any

_REQUEST_ID_PATTERN = re.compile(r"^[\x21-\x7e]{1,128}$")
_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)
_request: contextvars.ContextVar[Any] = contextvars.ContextVar("request", default=None)
_started: contextvars.ContextVar[float | None] = contextvars.ContextVar("started", default=None)


def set_current_request(request: Any, *, started: float | None = None) -> None:
    """`started`: `time.perf_counter()` when the request arrived (answers that say how long they took)."""
    _request.set(request)
    _started.set(started)


def elapsed_seconds() -> float:
    """Seconds since the current request arrived (0.0 outside one): Opsgenie's `took`, for example."""
    started = _started.get()
    return max(time.perf_counter() - started, 0.0) if started is not None else 0.0


def current_request() -> Any:
    """The request this thread is answering (a chalice Request), or None outside one."""
    return _request.get()


def accept_or_generate_request_id(offered: str | None) -> str:
    """A client's X-Request-Id is echoed when it is 1-128 printable characters; else we make one."""
    if offered and _REQUEST_ID_PATTERN.match(offered):
        return offered
    return f"req_{uuid.uuid4().hex}"


def set_request_id(request_id: str) -> None:
    _request_id.set(request_id)


def request_id() -> str:
    current = _request_id.get()
    if current is None:
        current = accept_or_generate_request_id(None)
        _request_id.set(current)
    return current
