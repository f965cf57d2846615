"""The success and error envelopes: the only place errors become HTTP responses."""

from __future__ import annotations

import json
from typing import Any

from chalice.app import Response

from chalicelib import clock
from chalicelib.api.context import request_id
from chalicelib.errors import AppError

JSON_HEADERS = {"Content-Type": "application/json"}


def _meta() -> dict[str, str]:
    return {"request_id": request_id(), "timestamp": clock.isoformat(clock.now())}


def to_jsonable(data: Any) -> Any:
    # Duck-typed, not isinstance(BaseModel): importing pydantic here would load it on every cold
    # start, even for responses that never touch a model (404s, the catch-all).
    if hasattr(data, "model_dump") and not isinstance(data, type):
        return data.model_dump(mode="json")
    if isinstance(data, list):
        return [to_jsonable(item) for item in data]
    if isinstance(data, dict):
        return {key: to_jsonable(value) for key, value in data.items()}
    return data


def success_response(data: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = {"success": True, "data": to_jsonable(data), "meta": _meta()}
    return Response(
        body=json.dumps(body, default=str),
        status_code=status,
        headers={**JSON_HEADERS, "X-Request-Id": request_id(), **(headers or {})},
    )


def error_body(error: AppError) -> dict[str, Any]:
    payload: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.user_message:
        payload["user_message"] = error.user_message
    if error.details is not None:
        payload["details"] = error.details
    return {"success": False, "error": payload, "meta": _meta()}


def error_response(error: AppError, *, headers: dict[str, str] | None = None) -> Response:
    return Response(
        body=json.dumps(error_body(error), default=str),
        status_code=error.status,
        headers={**JSON_HEADERS, "X-Request-Id": request_id(), **error.headers, **(headers or {})},
    )
