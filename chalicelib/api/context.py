"""Per-request context (request id), set by the middleware, read by views and logs."""

from __future__ import annotations

import contextvars
import re
import uuid

_REQUEST_ID_PATTERN = re.compile(r"^[\x21-\x7e]{1,128}$")
_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)


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
