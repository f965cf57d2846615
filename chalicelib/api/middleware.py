"""HTTP middleware: request ids, structured access logs, and enveloping Chalice's own errors.

Errors raised in views never reach here: the request pipeline (chalicelib.api.pipeline) renders
them. What is left is Chalice's own answers (405 with Allow for a method the route lacks, any
method included, 400 on bad JSON, 415, its 500), rendered in the family the route table gives
the route they came from (the API envelope, the webhook body, PagerDuty's...), and the rate limit
of answers no operation counted (unrouted requests). A method the catch-all route lacks is a 404:
no route matches that path at all."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from chalice.app import Request, Response

from chalicelib.api.context import accept_or_generate_request_id, set_current_request, set_request_id
from chalicelib.api.error_render import ErrorFamily, render
from chalicelib.errors import AppError, InternalError, MethodNotAllowed, NotFound, RateLimited, ValidationFailed

if TYPE_CHECKING:
    from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.access")

API_PREFIX = "/api/v1"
CATCH_ALL = "/{proxy+}"


def concrete_path(request: Request) -> str:
    return str((request.context or {}).get("path") or request.path)


def _chalice_error_to_app_error(response: Response) -> AppError | None:
    """Chalice answers a few errors itself (405, its 500, 400 on bad JSON); map them to ours."""
    if response.status_code < 400:
        return None
    body = response.body
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return None
    if not isinstance(body, dict) or set(body) != {"Code", "Message"}:
        return None
    if response.status_code == 405:
        return MethodNotAllowed()
    if response.status_code == 404:
        return NotFound()
    if response.status_code in (400, 415):
        return ValidationFailed(str(body.get("Message") or "The request is invalid."))
    return InternalError()


def http_middleware(event: Request, get_response: Callable[[Request], Response]) -> Response:
    started = time.perf_counter()
    request_id = accept_or_generate_request_id(event.headers.get("x-request-id"))
    set_request_id(request_id)
    set_current_request(event, started=started)
    path = concrete_path(event)
    response = get_response(event)
    replacement = _chalice_error_to_app_error(response)
    if replacement is not None:
        resource = str((event.context or {}).get("resourcePath") or "")
        if resource == CATCH_ALL and isinstance(replacement, MethodNotAllowed):
            replacement = NotFound(f"No route matches {path}.")
        else:
            replacement = replacement.with_headers(_keep_allow(response))
        response = render(_family_of(resource), replacement, app_url=_settings().app_url())
    if "X-RateLimit-Category" not in response.headers and response.status_code in (404, 405):
        response = _charge_unrouted(event, response, _settings())
    response.headers.setdefault("X-Request-Id", request_id)
    logger.info(
        "request",
        extra={
            "request_id": request_id,
            "method": event.method,
            "path": path,
            "status": response.status_code,
            "duration_ms": round((time.perf_counter() - started) * 1000, 2),
        },
    )
    return response


def _settings() -> Settings:
    """Chalice's own answers and unrouted requests never reach the pipeline: this middleware is
    their entry point, so it reads the settings for them (imported here: `import app` stays free
    of pydantic)."""
    from chalicelib.settings import get_settings

    return get_settings()


def _family_of(resource_path: str) -> ErrorFamily:
    """How the operations of a route answer errors, from its row (the API envelope when no row has it)."""
    from chalicelib.api import lazy

    row = next((row for row in lazy.mounted_rows() if row.path == resource_path), None)
    return ErrorFamily(row.family) if row is not None else ErrorFamily.API


def _charge_unrouted(event: Request, response: Response, settings: Settings) -> Response:
    """Answers the operation pipeline did not count (404, 405) count against the caller's address,
    so they carry the rate-limit headers too."""
    from chalicelib import clock
    from chalicelib.api.admission import charge_unrouted

    try:
        decision = charge_unrouted(event, clock.now(), settings=settings)
    except RateLimited as limited:
        return render(ErrorFamily.API, limited, app_url=settings.app_url())
    response.headers.update(decision.headers())
    return response


def _keep_allow(response: Response) -> dict[str, str]:
    allow = response.headers.get("Allow")
    return {"Allow": str(allow)} if allow else {}
