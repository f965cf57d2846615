"""The request pipeline's steps, as tables (no AWS: buckets are counted by a fake).

Admission (the operation's bucket, its credential kind, its scope), the rate-limit headers on
every answer whatever it is, the family each error is rendered in, an operation's own error
page, and the family's after-answer steps.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from chalice.app import Response

from chalicelib.api import admission, pipeline
from chalicelib.api.credential_kinds import ANONYMOUS, PUBLIC, CredentialKind, Inbound, Refused, Verified
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import (
    CREDENTIAL_BUCKET,
    NO_BUCKET,
    BoundOperation,
    BucketRule,
    Call,
    Envelope,
    Operation,
    per_address,
)
from chalicelib.auth.principal import Principal
from chalicelib.errors import AppError, Forbidden, InvalidSignature, NotFound, RateLimited, RouteNotFound
from chalicelib.ratelimit.buckets import Bucket
from chalicelib.ratelimit.window import RateLimitDecision

ADDRESS = "198.51.100.7"
KEY_BUCKET = Bucket("api_key", "key_1")
UNVERIFIED = Bucket("webhook_unverified", "int_1#" + ADDRESS, "Too many bad signatures.")
PERSON = Principal(organization_id="org_1", credential_kind="api_key", scopes=frozenset({"incidents:read"}))


@dataclass
class FakeRequest:
    """What the pipeline reads of a chalice Request."""

    method: str = "GET"
    headers: dict[str, str] = field(default_factory=dict)
    raw_body: bytes = b""
    query_params: Any = None
    context: dict[str, Any] = field(default_factory=lambda: {"identity": {"sourceIp": ADDRESS}})


@dataclass
class Buckets:
    """Counts charges; a bucket in `spent` answers 429 as the real one does."""

    charged: list[Bucket] = field(default_factory=list)
    spent: set[str] = field(default_factory=set)

    def charge(self, bucket: Bucket, now: Any, *, settings: Any) -> RateLimitDecision:
        self.charged.append(bucket)
        hits = 11 if bucket.category in self.spent else len(self.charged)
        decision = RateLimitDecision(bucket.category, 10, hits, reset_at=60, now_epoch=0.0)
        if not decision.allowed:
            raise RateLimited(bucket.refusal, headers=decision.headers())
        return decision


@pytest.fixture
def buckets(monkeypatch: pytest.MonkeyPatch) -> Iterator[Buckets]:
    fake = Buckets()
    monkeypatch.setattr(admission, "charge_bucket", fake.charge)
    yield fake


def kind(outcome: Verified | AppError | Refused) -> CredentialKind:
    def verify(inbound: Inbound) -> Verified:
        if isinstance(outcome, (AppError, Refused)):
            raise outcome
        return outcome

    return CredentialKind("test", verify)


def ok(call: Call) -> Response:
    return Response(body="fine", status_code=200, headers={"Content-Type": "text/plain"})


def run(
    credential: CredentialKind,
    bucket: BucketRule,
    handler: Callable[[Call], Any] = ok,
    *,
    family: ErrorFamily = ErrorFamily.WEBHOOK,
    envelope: Envelope = Envelope.RAW,
    request: FakeRequest | None = None,
    **declared: Any,
) -> Response:
    operation = Operation(
        "GET",
        "/x/{user_id}",
        "getX",
        "x",
        "test",
        credential=credential,
        bucket=bucket,
        family=family,
        envelope=envelope,
        **declared,
    )
    return pipeline.answer(BoundOperation(operation, handler, "tests"), request or FakeRequest(), {"user_id": "u_1"})  # type: ignore[arg-type]


def category(response: Response) -> str | None:
    return response.headers.get("X-RateLimit-Category")


# --- admission: which bucket, when, and what the answer says -------------------------------------


@pytest.mark.parametrize(
    ("credential", "rule", "status", "charged", "header"),
    [
        # A verified credential's bucket, when the operation counts per credential.
        (kind(Verified(PERSON, bucket=KEY_BUCKET)), CREDENTIAL_BUCKET, 200, ["api_key"], "api_key"),
        (kind(Verified(PERSON, bucket=KEY_BUCKET)), NO_BUCKET, 200, [], None),
        (
            kind(Verified(PERSON, bucket=KEY_BUCKET)),
            per_address("public_status"),
            200,
            ["public_status"],
            "public_status",
        ),
        # A public operation counts per address, or not at all.
        (PUBLIC, per_address("public_status"), 200, ["public_status"], "public_status"),
        (PUBLIC, CREDENTIAL_BUCKET, 200, [], None),
        # A refusal naming a bucket charges it, and carries its headers.
        (
            kind(Refused(InvalidSignature(), bucket=UNVERIFIED)),
            CREDENTIAL_BUCKET,
            401,
            ["webhook_unverified"],
            "webhook_unverified",
        ),
        (kind(Refused(InvalidSignature(), bucket=UNVERIFIED)), NO_BUCKET, 401, [], None),
        # A refusal naming none charges nothing (an unknown routing key)...
        (kind(RouteNotFound()), CREDENTIAL_BUCKET, 404, [], None),
        # ...but an operation counted per address was charged before the credential was looked at.
        (kind(NotFound()), per_address("anonymous"), 404, ["anonymous"], "anonymous"),
    ],
)
def test_the_bucket_an_answer_counts_against(
    buckets: Buckets, credential: CredentialKind, rule: BucketRule, status: int, charged: list[str], header: str | None
) -> None:
    response = run(credential, rule)
    assert (response.status_code, [b.category for b in buckets.charged], category(response)) == (
        status,
        charged,
        header,
    )


@pytest.mark.parametrize(
    ("credential", "rule", "spent", "message"),
    [
        (kind(Verified(PERSON, bucket=KEY_BUCKET)), CREDENTIAL_BUCKET, "api_key", RateLimited.default_message),
        (
            kind(Refused(InvalidSignature(), bucket=UNVERIFIED)),
            CREDENTIAL_BUCKET,
            "webhook_unverified",
            UNVERIFIED.refusal,
        ),
        (PUBLIC, per_address("status_subscribe"), "status_subscribe", RateLimited.default_message),
    ],
)
def test_a_spent_bucket_is_429_before_anything_else(
    buckets: Buckets, credential: CredentialKind, rule: BucketRule, spent: str, message: str
) -> None:
    buckets.spent.add(spent)
    handled: list[Call] = []
    response = run(credential, rule, lambda call: handled.append(call) or ok(call))
    body = json.loads(response.body)
    assert (response.status_code, body["error"]["code"], body["error"]["message"]) == (429, "RATE_LIMITED", message)
    assert (category(response), response.headers["Retry-After"], handled) == (spent, "60", [])


def test_an_address_bucket_is_charged_before_the_credential_is_verified(buckets: Buckets) -> None:
    buckets.spent.add("anonymous")
    looked_up: list[Inbound] = []

    def verify(inbound: Inbound) -> Verified:
        looked_up.append(inbound)
        return Verified()

    assert run(CredentialKind("token", verify), per_address("anonymous")).status_code == 429
    assert looked_up == []  # a guessed token costs the guesser, not a lookup


def test_a_refusal_may_answer_in_its_own_way_and_still_carries_the_headers(buckets: Buckets) -> None:
    to_sign_in = Response(body="", status_code=303, headers={"Location": "/app/sign-in"})
    refused = Refused(AppError("sign in"), bucket=Bucket("anonymous", ADDRESS), answer=to_sign_in)
    response = run(kind(refused), CREDENTIAL_BUCKET)
    assert (response.status_code, response.headers["Location"], category(response)) == (
        303,
        "/app/sign-in",
        "anonymous",
    )


@pytest.mark.parametrize(
    ("principal", "path_user", "method", "status"),
    [
        (PERSON, "u_1", "GET", 403),  # no scope, and no user of its own
        (Principal("org_1", "session", frozenset(), user_id="u_1"), "u_1", "POST", 200),  # itself
        (Principal("org_1", "session", frozenset(), user_id="u_2"), "u_1", "GET", 403),  # another person
        (Principal("org_1", "api_key", frozenset({"x:read"}), user_id="u_1"), "u_1", "GET", 200),  # reads itself
        (Principal("org_1", "api_key", frozenset({"x:read"}), user_id="u_1"), "u_1", "POST", 403),  # read-only key
        (Principal("org_1", "api_key", frozenset({"users:write"}), user_id="u_9"), "u_1", "POST", 200),  # the scope
    ],
)
def test_the_scope_is_required_unless_the_credential_acts_on_itself(
    buckets: Buckets, principal: Principal, path_user: str, method: str, status: int
) -> None:
    operation = Operation(
        method,
        "/x/{user_id}",
        "x",
        "x",
        "t",
        credential=kind(Verified(principal, bucket=KEY_BUCKET)),
        scope="users:write",
        self_param="user_id",
        envelope=Envelope.RAW,
    )
    response = pipeline.answer(
        BoundOperation(operation, ok, "tests"), FakeRequest(method=method), {"user_id": path_user}
    )  # type: ignore[arg-type]
    assert response.status_code == status
    assert category(response) == "api_key"  # charged before the scope is checked: a 403 counts too


# --- headers on every answer ----------------------------------------------------------------------


def _raises(error: Exception) -> Callable[[Call], Any]:
    def handler(call: Call) -> Any:
        raise error

    return handler


@pytest.mark.parametrize(
    ("handler", "envelope", "status", "code"),
    [
        (ok, Envelope.RAW, 200, None),
        (lambda call: {"fine": True}, Envelope.API, 200, None),
        (_raises(NotFound("gone")), Envelope.RAW, 404, "NOT_FOUND"),
        (_raises(NotFound("gone")), Envelope.API, 404, "NOT_FOUND"),
        (_raises(RuntimeError("secret detail")), Envelope.RAW, 500, "INTERNAL_ERROR"),
        (_raises(RuntimeError("secret detail")), Envelope.API, 500, "INTERNAL_ERROR"),
        (_raises(RateLimited("a nested budget", headers={"Retry-After": "30"})), Envelope.API, 429, "RATE_LIMITED"),
    ],
)
def test_every_answer_carries_the_rate_limit_headers_once(
    buckets: Buckets, handler: Callable[[Call], Any], envelope: Envelope, status: int, code: str | None
) -> None:
    family = ErrorFamily.API if envelope is Envelope.API else ErrorFamily.WEBHOOK
    response = run(
        kind(Verified(PERSON, bucket=KEY_BUCKET)), CREDENTIAL_BUCKET, handler, family=family, envelope=envelope
    )
    assert response.status_code == status
    assert (category(response), response.headers["X-RateLimit-Remaining"]) == ("api_key", "9")
    assert len(buckets.charged) == 1
    if code is not None:
        assert json.loads(response.body)["error"]["code"] == code
        assert "secret" not in response.body
    if code == "RATE_LIMITED":  # the error's own Retry-After stays: it says when that budget clears
        assert response.headers["Retry-After"] == "30"


def test_an_unexpected_error_says_what_the_operation_says() -> None:
    response = run(
        PUBLIC, NO_BUCKET, _raises(KeyError("x")), unexpected="The delivery could not be processed; retry it."
    )
    body = json.loads(response.body)
    assert (response.status_code, body["error"]["message"]) == (500, "The delivery could not be processed; retry it.")


def test_an_api_operation_parses_its_input_and_a_raw_one_reads_its_own(buckets: Buckets) -> None:
    api = run(
        PUBLIC,
        NO_BUCKET,
        lambda call: {},
        family=ErrorFamily.API,
        envelope=Envelope.API,
        request=FakeRequest(raw_body=b"[1]"),
    )
    assert json.loads(api.body)["error"]["code"] == "VALIDATION_ERROR"  # a body where none is expected
    raw = run(
        PUBLIC,
        NO_BUCKET,
        lambda call: ok(call) if call.raw_body == b"<xml/>" else None,
        request=FakeRequest(raw_body=b"<xml/>"),
    )
    assert raw.status_code == 200


# --- families ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("family", "content_type", "shape"),
    [
        (ErrorFamily.API, "application/json", lambda body: set(json.loads(body)) == {"success", "error", "meta"}),
        (ErrorFamily.WEBHOOK, "application/json", lambda body: set(json.loads(body)) == {"success", "error"}),
        (ErrorFamily.PAGERDUTY, "application/json", lambda body: json.loads(body)["status"] == "invalid event"),
        (ErrorFamily.PUBLIC_JSON, "application/json", lambda body: json.loads(body)["error"]["code"] == "NOT_FOUND"),
        (ErrorFamily.PUBLIC_HTML, "text/html; charset=utf-8", lambda body: "<html" in body.lower()),
        (ErrorFamily.CONSOLE, "text/html; charset=utf-8", lambda body: "<html" in body.lower()),
    ],
)
def test_errors_are_rendered_in_the_operations_family(
    buckets: Buckets, family: ErrorFamily, content_type: str, shape: Callable[[str], bool]
) -> None:
    response = run(PUBLIC, per_address("public_status"), _raises(NotFound("gone")), family=family)
    assert response.status_code == (400 if family is ErrorFamily.PAGERDUTY else 404)
    assert response.headers["Content-Type"] == content_type and shape(response.body)
    assert category(response) == "public_status"


def test_an_operations_own_error_page_comes_before_its_family(buckets: Buckets) -> None:
    def page(request: Any, path: Any, error: AppError, settings: Any) -> Response | None:
        if request.headers.get("content-type") != "application/x-www-form-urlencoded":
            return None
        return Response(body=f"<p>{error.code}</p>", status_code=error.status, headers=dict(error.headers))

    form = FakeRequest(headers={"content-type": "application/x-www-form-urlencoded"})
    for request, body in ((form, "<p>FORBIDDEN</p>"), (FakeRequest(), None)):
        response = run(PUBLIC, per_address("status_subscribe"), _raises(Forbidden()), request=request, error_page=page)
        assert response.status_code == 403 and category(response) == "status_subscribe"
        assert body is None or response.body == body


# --- after the answer --------------------------------------------------------------------------------


def test_a_familys_after_answer_steps_see_every_answer_and_cannot_break_it(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, int, str | None]] = []
    monkeypatch.setattr(pipeline, "_AFTER_ANSWER", {})

    @pipeline.after_answer(ErrorFamily.WEBHOOK, ErrorFamily.PAGERDUTY)
    def record(answered: pipeline.Answered) -> None:
        code = answered.error.code if answered.error else None
        seen.append((answered.operation.operation_id, answered.response.status_code, code))

    @pipeline.after_answer(ErrorFamily.WEBHOOK)
    def broken(answered: pipeline.Answered) -> None:
        raise RuntimeError("the log is down")

    assert run(PUBLIC, NO_BUCKET).status_code == 200
    assert run(kind(RouteNotFound()), NO_BUCKET).status_code == 404
    assert run(PUBLIC, NO_BUCKET, family=ErrorFamily.API).status_code == 200  # another family: not seen
    assert seen == [("getX", 200, None), ("getX", 404, "ROUTE_NOT_FOUND")]


def test_the_anonymous_principal_has_no_scope() -> None:
    assert ANONYMOUS.scopes == frozenset() and ANONYMOUS.credential_kind == "anonymous"
