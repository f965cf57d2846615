"""The route families answer the same errors, each in its own body (no AWS needed)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from chalice.app import Response

from chalicelib.api import pipeline
from chalicelib.api.credential_kinds import PUBLIC
from chalicelib.api.error_render import ErrorFamily, render
from chalicelib.api.operation import NO_BUCKET, BoundOperation, Call, Envelope, Operation
from chalicelib.errors import (
    AppError,
    InternalError,
    InvalidPayload,
    InvalidSignature,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    RouteNotFound,
)
from chalicelib.settings import get_settings

RATE = {"X-RateLimit-Remaining": "7"}


def body(response: Response) -> Any:
    return json.loads(response.body)


def test_api_family_is_the_envelope() -> None:
    response = render(ErrorFamily.API, NotFound("gone", headers=RATE), app_url=get_settings().app_url())
    document = body(response)
    assert response.status_code == 404 and response.headers["X-RateLimit-Remaining"] == "7"
    assert document["success"] is False and document["error"] == {"code": "NOT_FOUND", "message": "gone"}
    assert set(document["meta"]) == {"request_id", "timestamp"}


def test_webhook_family_is_the_bare_body() -> None:
    response = render(
        ErrorFamily.WEBHOOK, InvalidSignature("bad signature", headers=RATE), app_url=get_settings().app_url()
    )
    assert response.status_code == 401 and response.headers["X-RateLimit-Remaining"] == "7"
    assert body(response) == {"success": False, "error": {"code": "INVALID_SIGNATURE", "message": "bad signature"}}


@pytest.mark.parametrize(
    ("error", "status", "expected"),
    [
        (
            RateLimited(headers=RATE),
            429,
            {
                "status": "throttle event",
                "message": "Requests for this service are arriving too quickly.  Please retry later.",
            },
        ),
        (PayloadTooLarge(), 413, {"status": "invalid event", "message": "Request entity too large"}),
        (InternalError("retry it"), 500, {"status": "error", "message": "retry it"}),
        (
            InvalidPayload.from_problems(["a", "b"]),
            400,
            {"status": "invalid event", "message": "Event object is invalid", "errors": ["a", "b"]},
        ),
        (
            RouteNotFound("no such key"),
            400,
            {"status": "invalid event", "message": "Event object is invalid", "errors": ["no such key"]},
        ),
    ],
)
def test_pagerduty_family_answers_as_pagerduty(error: AppError, status: int, expected: dict[str, Any]) -> None:
    response = render(ErrorFamily.PAGERDUTY, error, app_url=get_settings().app_url())
    assert (response.status_code, body(response)) == (status, expected)


def test_public_families_carry_the_public_headers() -> None:
    as_json = render(
        ErrorFamily.PUBLIC_JSON, NotFound("Status page not found.", headers=RATE), app_url=get_settings().app_url()
    )
    assert as_json.status_code == 404 and body(as_json)["error"]["code"] == "NOT_FOUND"
    as_html = render(
        ErrorFamily.PUBLIC_HTML, InternalError("<b>down</b>"), {"slug": "acme"}, app_url=get_settings().app_url()
    )
    assert as_html.status_code == 500 and "&lt;b&gt;down&lt;/b&gt;" in as_html.body
    for response, content_type in ((as_json, "application/json"), (as_html, "text/html; charset=utf-8")):
        assert response.headers["Access-Control-Allow-Origin"] == "*"
        assert response.headers["Cache-Control"] == "no-store"
        assert response.headers["Content-Type"] == content_type
    assert "Content-Security-Policy" in as_html.headers and as_json.headers["X-RateLimit-Remaining"] == "7"


def _answer(family: ErrorFamily, handler: Any) -> Response:
    from tests.unit.test_pipeline import FakeRequest

    operation = Operation(
        "GET", "/x", "getX", "x", "test", credential=PUBLIC, bucket=NO_BUCKET, family=family, envelope=Envelope.RAW
    )
    return pipeline.answer(BoundOperation(operation, handler, "tests"), FakeRequest(), {})  # type: ignore[arg-type]


def test_the_pipeline_renders_every_error_in_the_operations_family() -> None:
    def refuses(call: Call) -> Response:
        raise RouteNotFound()

    def explodes(call: Call) -> Response:
        raise RuntimeError("secret internal detail")

    refused = _answer(ErrorFamily.WEBHOOK, refuses)
    assert (refused.status_code, body(refused)["error"]["code"]) == (404, "ROUTE_NOT_FOUND")
    exploded = _answer(ErrorFamily.API, explodes)
    assert (exploded.status_code, body(exploded)["error"]["code"]) == (500, "INTERNAL_ERROR")
    assert "secret" not in exploded.body and "meta" in body(exploded)
