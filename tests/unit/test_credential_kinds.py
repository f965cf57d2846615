"""Each credential kind, on the requests it refuses before looking anything up (no AWS): the error,
and the bucket the refusal counts against. What they accept is exercised over HTTP (tests/api,
tests/console), where there is something to find."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from chalicelib.api.capability_tokens import CALENDAR_FEED_TOKEN, HEARTBEAT_PING_TOKEN
from chalicelib.api.credential_kinds import API_KEY_OR_SESSION, PUBLIC, CredentialKind, Inbound, Refused, Verified
from chalicelib.api.provider_signatures import SLACK_V0_SIGNATURE, SNS_SMS_TOPIC_SIGNATURE, TWILIO_SIGNATURE
from chalicelib.api.routing_keys import ROUTING_KEY_IN_BEARER, ROUTING_KEY_IN_PAGERDUTY_BODY
from chalicelib.console.visits import CONSOLE_SESSION, CONSOLE_SESSION_OR_ANONYMOUS, Visit
from chalicelib.errors import AppError
from chalicelib.settings import get_settings
from tests.unit.test_pipeline import ADDRESS, FakeRequest

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
FORM = {"content-type": "application/x-www-form-urlencoded"}


def inbound(path: dict[str, str] | None = None, **request: Any) -> Inbound:
    return Inbound(FakeRequest(**request), path or {}, NOW, get_settings())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("credential", "request_", "code", "bucket"),
    [
        (API_KEY_OR_SESSION, inbound(), "UNAUTHORIZED", ("anonymous", ADDRESS)),
        (API_KEY_OR_SESSION, inbound(headers={"authorization": "Basic eDp5"}), "UNAUTHORIZED", ("anonymous", ADDRESS)),
        (
            API_KEY_OR_SESSION,
            inbound(headers={"authorization": "Bearer guess"}),
            "UNAUTHORIZED",
            ("anonymous", ADDRESS),
        ),
        (ROUTING_KEY_IN_BEARER, inbound(method="POST"), "ROUTE_NOT_FOUND", None),
        (ROUTING_KEY_IN_PAGERDUTY_BODY, inbound(raw_body=b"{not json"), "INVALID_PAYLOAD", None),
        (ROUTING_KEY_IN_PAGERDUTY_BODY, inbound(raw_body=b'{"routing_key": " "}'), "INVALID_PAYLOAD", None),
        (SLACK_V0_SIGNATURE, inbound(raw_body=b"payload=%7B%7D"), "INVALID_SIGNATURE", None),
        (TWILIO_SIGNATURE, inbound(raw_body=b"Digits=4&" + b"x" * 17000), "PAYLOAD_TOO_LARGE", None),
        (TWILIO_SIGNATURE, inbound(raw_body=b"Digits=\xff"), "INVALID_PAYLOAD", None),
        (TWILIO_SIGNATURE, inbound(raw_body=b"Digits=4"), "INVALID_SIGNATURE", None),
        (SNS_SMS_TOPIC_SIGNATURE, inbound(raw_body=b"{}"), "NOT_FOUND", None),
        (HEARTBEAT_PING_TOKEN, inbound({"token": "not-a-token"}), "NOT_FOUND", None),
        (CALENDAR_FEED_TOKEN, inbound({"token": "short.ics"}), "NOT_FOUND", None),
        (
            CONSOLE_SESSION_OR_ANONYMOUS,
            inbound(method="POST", raw_body=b"csrf_token=forged", headers=FORM),
            "FORBIDDEN",
            ("anonymous", ADDRESS),
        ),
        (
            CONSOLE_SESSION_OR_ANONYMOUS,
            inbound(method="POST", raw_body=b"x" * 70000),
            "PAYLOAD_TOO_LARGE",
            ("anonymous", ADDRESS),
        ),
    ],
)
def test_refusals_before_any_lookup(
    credential: CredentialKind, request_: Inbound, code: str, bucket: tuple[str, str] | None
) -> None:
    with pytest.raises((AppError, Refused)) as refused:
        credential.verify(request_)
    error = refused.value.error if isinstance(refused.value, Refused) else refused.value
    named = refused.value.bucket if isinstance(refused.value, Refused) else None
    assert error.code == code  # type: ignore[union-attr]
    assert ((named.category, named.identity) if named else None) == bucket


def test_public_proves_nothing_and_names_no_bucket() -> None:
    assert PUBLIC.verify(inbound()) == Verified()
    assert not PUBLIC.bearer and API_KEY_OR_SESSION.bearer


def test_the_console_sends_a_browser_without_a_session_to_sign_in_and_counts_it_per_address() -> None:
    with pytest.raises(Refused) as refused:
        CONSOLE_SESSION.verify(inbound({"incident": "INC-7"}, context=_console_context("/app/incidents/{incident}")))
    answer = refused.value.answer
    assert answer is not None and answer.status_code == 303
    assert answer.headers["Location"] == "/app/sign-in?next=%2Fapp%2Fincidents%2FINC-7"
    assert refused.value.bucket is not None and refused.value.bucket.category == "anonymous"


def test_the_console_lets_a_browser_without_a_session_see_its_anonymous_pages_with_a_pre_session() -> None:
    verified = CONSOLE_SESSION_OR_ANONYMOUS.verify(inbound(context=_console_context("/app/sign-in")))
    visit: Visit = verified.subject
    assert visit.principal is None and len(visit.csrf_token) == 64
    assert visit.set_cookies and visit.set_cookies[0].startswith("tocsin_pre=")
    assert verified.bucket is not None and (verified.bucket.category, verified.bucket.identity) == (
        "anonymous",
        ADDRESS,
    )


def _console_context(resource: str) -> dict[str, Any]:
    return {"identity": {"sourceIp": ADDRESS}, "resourcePath": resource}
