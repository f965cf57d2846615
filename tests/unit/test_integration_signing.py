from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.errors import DeliveryRejected
from chalicelib.integration import signing

SECRET = "whsec_3f9a2c7e1b"
NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)
TS = int(NOW.timestamp())
BODY = json.dumps({"title": "Disk full", "service_id": "SER-00001"}).encode()


def headers_for(body=BODY, timestamp=TS, secret=SECRET):
    return signing.signed_headers(secret, timestamp, body)


def rejected(call) -> DeliveryRejected:
    with pytest.raises(DeliveryRejected) as caught:
        call()
    return caught.value


def test_sign_matches_the_documented_computation():
    expected = hmac.new(SECRET.encode(), f"{TS}.".encode() + BODY, hashlib.sha256).hexdigest()
    assert signing.sign(SECRET, TS, BODY) == f"sha256={expected}"
    assert signing.sign(SECRET, str(TS), BODY) == signing.sign(SECRET.encode(), TS, BODY)


def test_valid_signature_is_accepted():
    assert signing.verify_custom(SECRET, headers_for(), BODY, now=NOW) == TS
    assert signing.verify_custom(SECRET, headers_for(), BODY, now=NOW.timestamp()) == TS


def test_headers_are_case_insensitive():
    lowered = {k.lower(): v for k, v in headers_for().items()}
    assert signing.verify_custom(SECRET, lowered, BODY, now=NOW) == TS
    upper_prefix = dict(
        lowered, **{"x-service-signature": lowered["x-service-signature"].replace("sha256=", "SHA256=")}
    )
    assert signing.verify_custom(SECRET, upper_prefix, BODY, now=NOW) == TS


def test_wrong_secret_is_rejected():
    error = rejected(lambda: signing.verify_custom("other-secret", headers_for(), BODY, now=NOW))
    assert error.code == "INVALID_SIGNATURE"
    assert "does not match" in error.message


def test_tampered_body_is_rejected():
    error = rejected(lambda: signing.verify_custom(SECRET, headers_for(), BODY + b" ", now=NOW))
    assert error.code == "INVALID_SIGNATURE"


def test_timestamp_is_part_of_the_signature():
    headers = headers_for()
    headers[signing.TIMESTAMP_HEADER] = str(TS - 1)
    assert rejected(lambda: signing.verify_custom(SECRET, headers, BODY, now=NOW)).code == "INVALID_SIGNATURE"


@pytest.mark.parametrize("missing", [signing.SIGNATURE_HEADER, signing.TIMESTAMP_HEADER])
def test_missing_header_is_rejected_with_its_name(missing):
    headers = headers_for()
    del headers[missing]
    error = rejected(lambda: signing.verify_custom(SECRET, headers, BODY, now=NOW))
    assert error.code == "INVALID_SIGNATURE"
    assert missing in error.message and "Missing" in error.message


def test_no_headers_at_all():
    assert rejected(lambda: signing.verify_custom(SECRET, None, BODY, now=NOW)).code == "INVALID_SIGNATURE"


@pytest.mark.parametrize(
    "value",
    ["abc", "sha1=" + "0" * 64, "sha256=" + "0" * 63, "sha256=" + "g" * 64, "sha256=", "0" * 64, "sha256=é" * 2],
)
def test_malformed_signature_header(value):
    headers = headers_for()
    headers[signing.SIGNATURE_HEADER] = value
    error = rejected(lambda: signing.verify_custom(SECRET, headers, BODY, now=NOW))
    assert error.code == "INVALID_SIGNATURE"
    assert "sha256=<64 hex" in error.message


@pytest.mark.parametrize("value", ["1795003200.5", "-100", "abc", "1e9", "2026-11-22T12:00:00Z", "\uff11\uff12\uff13"])
def test_malformed_timestamp(value):
    headers = {signing.TIMESTAMP_HEADER: value, signing.SIGNATURE_HEADER: signing.sign(SECRET, value, BODY)}
    error = rejected(lambda: signing.verify_custom(SECRET, headers, BODY, now=NOW))
    assert error.code == "INVALID_SIGNATURE"
    assert signing.TIMESTAMP_HEADER in error.message


@pytest.mark.parametrize(("offset", "ok"), [(0, True), (-300, True), (-301, False), (60, True), (61, False)])
def test_window_edges_are_inclusive(offset, ok):
    timestamp = TS + offset
    call = lambda: signing.verify_custom(SECRET, headers_for(timestamp=timestamp), BODY, now=NOW)  # noqa: E731
    if ok:
        assert call() == timestamp
    else:
        error = rejected(call)
        assert error.code == "SIGNATURE_EXPIRED"
        assert error.status == 401


def test_fractional_now_uses_whole_seconds():
    now = NOW + timedelta(milliseconds=900)
    assert signing.verify_custom(SECRET, headers_for(timestamp=TS - 300), BODY, now=now) == TS - 300


def test_expired_message_says_why():
    error = rejected(lambda: signing.verify_custom(SECRET, headers_for(timestamp=TS - 3600), BODY, now=NOW))
    assert "3600 s old" in error.message
    error = rejected(lambda: signing.verify_custom(SECRET, headers_for(timestamp=TS + 120), BODY, now=NOW))
    assert "future" in error.message


def test_stale_forgery_is_invalid_not_expired():
    headers = headers_for(timestamp=TS - 3600, secret="attacker")
    assert rejected(lambda: signing.verify_custom(SECRET, headers, BODY, now=NOW)).code == "INVALID_SIGNATURE"


def test_non_ascii_body_is_verified_as_raw_bytes():
    body = '{"title": "Überlast in Zürich — 東京", "service_id": "SER-00001"}'.encode()
    headers = headers_for(body=body)
    assert signing.verify_custom(SECRET, headers, body, now=NOW) == TS
    reencoded = json.dumps(json.loads(body)).encode()  # escapes non-ASCII: different bytes
    assert reencoded != body
    assert rejected(lambda: signing.verify_custom(SECRET, headers, reencoded, now=NOW)).code == "INVALID_SIGNATURE"
    latin1 = "Überlast".encode("latin-1")  # not even UTF-8: still just bytes
    assert signing.verify_custom(SECRET, headers_for(body=latin1), latin1, now=NOW) == TS


def test_naive_now_is_a_programming_error():
    with pytest.raises(ValueError):
        signing.verify_custom(SECRET, headers_for(), BODY, now=datetime(2026, 11, 22, 12))


def test_empty_secret_is_a_programming_error():
    with pytest.raises(ValueError):
        signing.sign("", TS, BODY)


@given(
    secret=st.text(min_size=1, max_size=64),
    body=st.binary(max_size=2048),
    skew=st.integers(min_value=-60, max_value=300),
)
def test_verify_accepts_exactly_what_sign_produced(secret, body, skew):
    timestamp = TS - skew
    headers = signing.signed_headers(secret, timestamp, body)
    assert signing.verify_custom(secret, headers, body, now=NOW) == timestamp


@given(body=st.binary(max_size=512), other=st.binary(max_size=512))
def test_verify_rejects_any_other_body(body, other):
    headers = signing.signed_headers(SECRET, TS, body)
    if other == body:
        assert signing.verify_custom(SECRET, headers, other, now=NOW) == TS
    else:
        with pytest.raises(DeliveryRejected) as caught:
            signing.verify_custom(SECRET, headers, other, now=NOW)
        assert caught.value.code == "INVALID_SIGNATURE"


# --- Sentry ----------------------------------------------------------------------------------------

CLIENT_SECRET = "7c1b9d4e2f8a0b3c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c"


def sentry_headers(body, secret=CLIENT_SECRET):
    return {"Sentry-Hook-Signature": hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()}


def test_sentry_signature_accepts_the_raw_body():
    body = b'{"action":"created","data":{"issue":{"title":"Fehler in M\\u00fcnchen"}}}'
    signing.verify_sentry(CLIENT_SECRET, sentry_headers(body), body)
    signing.verify_sentry(CLIENT_SECRET, {"sentry-hook-signature": sentry_headers(body)["Sentry-Hook-Signature"]}, body)
    assert signing.sentry_signature(CLIENT_SECRET, body) == sentry_headers(body)["Sentry-Hook-Signature"]


def test_sentry_non_ascii_raw_bytes():
    body = '{"title":"Fehler in München"}'.encode()
    signing.verify_sentry(CLIENT_SECRET, sentry_headers(body), body)
    escaped = b'{"title":"Fehler in M\\u00fcnchen"}'
    error = rejected(lambda: signing.verify_sentry(CLIENT_SECRET, sentry_headers(body), escaped))
    assert error.code == "INVALID_SIGNATURE"


def test_sentry_uppercase_hex_is_tolerated():
    body = b"{}"
    headers = {"Sentry-Hook-Signature": sentry_headers(body)["Sentry-Hook-Signature"].upper()}
    signing.verify_sentry(CLIENT_SECRET, headers, body)


@pytest.mark.parametrize(
    ("headers", "fragment"),
    [
        ({}, "Missing Sentry-Hook-Signature"),
        ({"Sentry-Hook-Signature": "sha256=" + "0" * 64}, "64 hex"),
        ({"Sentry-Hook-Signature": "xyz"}, "64 hex"),
        ({"Sentry-Hook-Signature": "0" * 64}, "does not match"),
    ],
)
def test_sentry_signature_failures(headers, fragment):
    error = rejected(lambda: signing.verify_sentry(CLIENT_SECRET, headers, b"{}"))
    assert error.code == "INVALID_SIGNATURE"
    assert fragment in error.message


def test_sentry_wrong_secret_and_tampered_body():
    body = b'{"action":"created"}'
    assert rejected(lambda: signing.verify_sentry("other", sentry_headers(body), body)).code == "INVALID_SIGNATURE"
    assert rejected(lambda: signing.verify_sentry(CLIENT_SECRET, sentry_headers(body), body + b"\n")).code == (
        "INVALID_SIGNATURE"
    )
