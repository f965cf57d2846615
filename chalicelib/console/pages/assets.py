"""The console's one stylesheet, served from the package (the CSP allows no other style source)."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from chalice.app import Response

from chalicelib.api.credential_kinds import PUBLIC
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import NO_BUCKET, Call, OperationGroup

api = OperationGroup(__name__, tag="console")
STYLESHEET = Path(__file__).resolve().parents[1] / "static" / "console.css"


@cache
def _stylesheet() -> tuple[str, str]:
    text = STYLESHEET.read_text()
    return text, '"' + hashlib.sha256(text.encode()).hexdigest()[:32] + '"'


@api.raw(
    "GET",
    "/app/static/console.css",
    operation_id="console_stylesheet",
    credential=PUBLIC,
    bucket=NO_BUCKET,
    summary="The console's stylesheet",
    content_type="text/css",
    family=ErrorFamily.CONSOLE,
    documented=False,
)
def stylesheet(call: Call) -> Response:
    text, etag = _stylesheet()
    headers: dict[str, str | list[str]] = {
        "Content-Type": "text/css; charset=utf-8",
        "Cache-Control": "public, max-age=3600",
        "ETag": etag,
    }
    if call.header("if-none-match") == etag:
        return Response(body="", status_code=304, headers=headers)
    return Response(body=text, status_code=200, headers=headers)
