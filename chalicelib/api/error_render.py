"""How each family of routes answers an error: the only place an `AppError` becomes a response.

Every route family raises the same errors (chalicelib.errors); they differ only in the body they
answer with. A route declares its family with its operation (`OperationGroup.operation` is always
the API envelope; `OperationGroup.raw(..., family=...)` picks one), and the request pipeline
(chalicelib.api.pipeline) catches every error of every operation and calls `render` with that
family, the request's rate-limit headers already on the error. The route table names each
route's family too, so the middleware renders Chalice's own errors (405, 415) the same way.

- API: `/api/v1`, the error envelope with `meta` (chalicelib.api.envelope).
- WEBHOOK: inbound webhooks, the legacy `/v1/incidents` path and the calendar feed:
  `{success: false, error: {code, message}}`.
- PAGERDUTY: `POST /v2/enqueue`, PagerDuty's own `{status, message, errors}` bodies.
- OPSGENIE: the Opsgenie Alert API drop-in (`/v2/alerts`, `/v2/heartbeats`), Opsgenie's own
  `{message, took, requestId}` (and `errors` naming invalid fields) with its status codes.
- PUBLIC_JSON / PUBLIC_HTML: public status pages, the webhook body or a small HTML page, with the
  public headers (CORS, no-store).
- CONSOLE: the responder console (/app), an HTML error page with the console's headers. A form's
  own mistakes (400, 404, 409) are shown on the form's page instead (chalicelib.console.web).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any

from chalice.app import Response

from chalicelib.api import envelope
from chalicelib.errors import (
    AppError,
    InvalidFields,
    MethodNotAllowed,
    PayloadTooLarge,
    RateLimited,
    RouteNotFound,
    WebhookRevoked,
)


class ErrorFamily(StrEnum):
    API = "api"
    WEBHOOK = "webhook"
    PAGERDUTY = "pagerduty"
    OPSGENIE = "opsgenie"
    PUBLIC_JSON = "public_json"
    PUBLIC_HTML = "public_html"
    CONSOLE = "console"


Renderer = Callable[[AppError, Mapping[str, str]], Response]

JSON_CONTENT_TYPE = "application/json"
HTML_CONTENT_TYPE = "text/html; charset=utf-8"


def render(
    family: ErrorFamily, error: AppError, path_params: Mapping[str, str] | None = None, *, app_url: str
) -> Response:
    """The response `error` gets on a route of `family` (`path_params`: the route's, e.g. a slug;
    `app_url`: the console's root, which its error page links back to)."""
    if family is ErrorFamily.CONSOLE:
        return _console(error, app_url)
    return _RENDERERS[family](error, path_params or {})


def _json(status: int, body: dict[str, Any], headers: Mapping[str, str]) -> Response:
    return Response(
        body=json.dumps(body, default=str),
        status_code=status,
        headers={"Content-Type": JSON_CONTENT_TYPE, **headers},
    )


def bare_error_body(error: AppError) -> dict[str, Any]:
    return {"success": False, "error": {"code": error.code, "message": error.message}}


def _api(error: AppError, _: Mapping[str, str]) -> Response:
    return envelope.error_response(error)


def _webhook(error: AppError, _: Mapping[str, str]) -> Response:
    return _json(error.status, bare_error_body(error), error.headers)


# What PagerDuty answers when throttled, word for word (its clients may match on it).
PAGERDUTY_THROTTLED = {
    "status": "throttle event",
    "message": "Requests for this service are arriving too quickly.  Please retry later.",
}


def _pagerduty(error: AppError, _: Mapping[str, str]) -> Response:
    # PagerDuty knows four answers: throttled, too large, its own failure, and 400 for the rest
    # (an unknown or revoked routing key included), listing every problem in `errors`.
    if isinstance(error, RateLimited):
        return _json(429, PAGERDUTY_THROTTLED, error.headers)
    if isinstance(error, PayloadTooLarge):
        return _json(413, {"status": "invalid event", "message": "Request entity too large"}, error.headers)
    if isinstance(error, MethodNotAllowed):  # HTTP's answer (with Allow), in PagerDuty's error shape
        return _json(405, {"status": "invalid event", "message": error.message}, error.headers)
    if error.status >= 500:
        return _json(500, {"status": "error", "message": error.message}, error.headers)
    from chalicelib.integration.parsers.pagerduty import invalid_event_body

    return _json(400, invalid_event_body(error), error.headers)


def opsgenie_body(message: str) -> dict[str, Any]:
    """The fields every Opsgenie answer has: a message (or `result`), `took` (seconds) and `requestId`."""
    from uuid import uuid4

    from chalicelib.api.context import elapsed_seconds

    return {"message": message, "took": round(elapsed_seconds(), 3), "requestId": str(uuid4())}


def _opsgenie(error: AppError, _: Mapping[str, str]) -> Response:
    # Opsgenie answers 401 to a key it does not know or whose integration is disabled; the gate's
    # refusals of a routing key (unknown or superseded: 404, revoked: 410) are that here.
    status = 401 if isinstance(error, RouteNotFound | WebhookRevoked) else error.status
    body = opsgenie_body(error.message)
    if isinstance(error, InvalidFields) and error.fields:
        body["errors"] = error.fields
    return _json(status, body, error.headers)


def public_headers(content_type: str) -> dict[str, str]:
    """The headers of every public status answer, success or error."""
    headers = {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Expose-Headers": "ETag",
        "Content-Type": content_type,
    }
    if content_type.startswith("text/html"):
        from chalicelib.statuspage.page_style import CONTENT_SECURITY_POLICY

        # Only the page's own inline stylesheet (pinned by hash); no scripts, no framing.
        headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return headers


def _public(error: AppError, body: str, content_type: str) -> Response:
    # no-store: a page created a moment later must show at once.
    headers: dict[str, str | list[str]] = {**error.headers, **public_headers(content_type), "Cache-Control": "no-store"}
    return Response(body=body, status_code=error.status, headers=headers)


def _public_json(error: AppError, _: Mapping[str, str]) -> Response:
    body = bare_error_body(error)
    if isinstance(error.details, dict):  # e.g. which fields a subscribe request got wrong
        body["error"]["details"] = error.details
    return _public(error, json.dumps(body), JSON_CONTENT_TYPE)


def _public_html(error: AppError, path_params: Mapping[str, str]) -> Response:
    if error.status == 404:
        from chalicelib.statuspage.page_html import render_not_found

        page = render_not_found(path_params.get("slug", ""))
    else:
        from chalicelib.statuspage.page_html import render_error

        page = render_error("Status page unavailable", error.message)
    return _public(error, page, HTML_CONTENT_TYPE)


# The console: its own stylesheet and forms only; no script, plugin, framing or foreign form target.
CONSOLE_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


def console_headers() -> dict[str, str]:
    """The headers of every console answer: pages show private data, so nothing is cached."""
    return {
        "Content-Type": HTML_CONTENT_TYPE,
        "Content-Security-Policy": CONSOLE_CSP,
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "same-origin",
    }


CONSOLE_TITLES = {
    400: "That did not work",
    401: "Please sign in again",
    403: "Not allowed",
    404: "Not found",
    405: "Not allowed",
    409: "Changed meanwhile",
    413: "Too large",
    429: "Too many requests",
}


def _console(error: AppError, app_url: str) -> Response:
    from chalicelib import templates

    title = CONSOLE_TITLES.get(error.status, "Something went wrong")
    page = templates.render(
        "console/error.html",
        title=title,
        message=error.message,
        status=error.status,
        app=_console_root(app_url),
    )
    return Response(body=page, status_code=error.status, headers={**error.headers, **console_headers()})


def _console_root(app_url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(app_url).path.rstrip("/")


_RENDERERS: dict[ErrorFamily, Renderer] = {
    ErrorFamily.API: _api,
    ErrorFamily.WEBHOOK: _webhook,
    ErrorFamily.PAGERDUTY: _pagerduty,
    ErrorFamily.OPSGENIE: _opsgenie,
    ErrorFamily.PUBLIC_JSON: _public_json,
    ErrorFamily.PUBLIC_HTML: _public_html,
}
