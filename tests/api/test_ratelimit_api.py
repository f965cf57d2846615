"""Rate limits over HTTP: per-key buckets, the 429 envelope, and X-RateLimit-* on every answer."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import jwt
import pytest

from chalicelib import clock
from tests.conftest import NOW, Org
from tests.conftest import reconfigure as _reconfigure

pytestmark = pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")

MOMENT = NOW + timedelta(seconds=1)  # one second into a 60 s window
RESET = str(int(NOW.timestamp()) + 60)
VERIFY = "/api/v1/auth/verify"


def reconfigure(**environment: str) -> None:
    """conftest.reconfigure, then read settings outside a chalice.test call (which applies the dev stage env)."""
    from chalicelib import aws
    from chalicelib.settings import get_settings

    _reconfigure(**environment)
    get_settings()
    aws.bind_tables()


@pytest.fixture(autouse=True)
def frozen_clock() -> Iterator[None]:
    # A frozen clock keeps every request of a test inside one window.
    with clock.frozen(MOMENT):
        yield


def get(client: Any, path: str, credential: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {credential}"} if credential is not None else {}
    return client.http.get(path, headers=headers)


def rate_headers(response: Any) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.startswith("X-RateLimit-") or k == "Retry-After"}


def test_fourth_request_over_a_limit_of_three_is_429(client: Any, org: Org) -> None:
    reconfigure(RATE_LIMIT_API_KEY="3")
    remaining = []
    for _ in range(3):
        response = get(client, VERIFY, org.owner_key)
        assert response.status_code == 200
        remaining.append(response.headers["X-RateLimit-Remaining"])
    assert remaining == ["2", "1", "0"]

    response = get(client, VERIFY, org.owner_key)
    assert response.status_code == 429
    document = json.loads(response.body)
    assert document["success"] is False
    assert document["error"]["code"] == "RATE_LIMITED"
    assert document["error"]["message"]
    assert document["meta"]["request_id"] == response.headers["X-Request-Id"]
    assert rate_headers(response) == {
        "X-RateLimit-Category": "api_key",
        "X-RateLimit-Limit": "3",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": RESET,
        "Retry-After": "59",
    }


def test_window_reset_lets_the_key_back_in(client: Any, org: Org) -> None:
    reconfigure(RATE_LIMIT_API_KEY="1")
    assert get(client, VERIFY, org.owner_key).status_code == 200
    assert get(client, VERIFY, org.owner_key).status_code == 429
    with clock.frozen(NOW + timedelta(seconds=60)):
        response = get(client, VERIFY, org.owner_key)
    assert response.status_code == 200
    assert response.headers["X-RateLimit-Reset"] == str(int(NOW.timestamp()) + 120)


def test_headers_on_success(client: Any, org: Org) -> None:
    response = get(client, VERIFY, org.owner_key)
    assert response.status_code == 200
    assert rate_headers(response) == {
        "X-RateLimit-Category": "api_key",
        "X-RateLimit-Limit": "600",
        "X-RateLimit-Remaining": "599",
        "X-RateLimit-Reset": RESET,
    }


def test_headers_on_401_charge_the_anonymous_bucket(client: Any, org: Org) -> None:
    for credential in (None, "tcs_" + "a" * 40, "garbage"):
        response = get(client, VERIFY, credential)
        assert response.status_code == 401
        headers = rate_headers(response)
        assert headers["X-RateLimit-Category"] == "anonymous"
        assert headers["X-RateLimit-Reset"] == RESET
        assert "Retry-After" not in headers
    assert headers["X-RateLimit-Remaining"] == "117"  # 120 per window by default, three spent


def test_failed_authentication_is_rate_limited_too(client: Any, org: Org) -> None:
    """Guessing keys from one address runs into the anonymous bucket."""
    reconfigure(RATE_LIMIT_ANONYMOUS="2")
    assert get(client, VERIFY, "tcs_" + "a" * 40).status_code == 401
    assert get(client, VERIFY, "tcs_" + "b" * 40).status_code == 401
    response = get(client, VERIFY, "tcs_" + "c" * 40)
    assert response.status_code == 429
    assert json.loads(response.body)["error"]["code"] == "RATE_LIMITED"
    assert response.headers["X-RateLimit-Category"] == "anonymous"
    assert response.headers["Retry-After"] == "59"
    # A valid key is not in that bucket.
    assert get(client, VERIFY, org.owner_key).status_code == 200


def test_headers_on_403(client: Any, org: Org) -> None:
    response = get(client, "/api/v1/api-keys", org.readonly_key)
    assert response.status_code == 403
    headers = rate_headers(response)
    assert headers["X-RateLimit-Category"] == "api_key"
    assert headers["X-RateLimit-Remaining"] == "599"
    assert headers["X-RateLimit-Reset"] == RESET


def test_headers_on_400(client: Any, org: Org) -> None:
    response = client.http.post(
        "/api/v1/api-keys",
        headers={"Authorization": f"Bearer {org.owner_key}", "Content-Type": "application/json"},
        body=b"{not json",
    )
    assert response.status_code == 400
    assert rate_headers(response)["X-RateLimit-Category"] == "api_key"


def test_separate_keys_have_separate_buckets(client: Any, org: Org) -> None:
    reconfigure(RATE_LIMIT_API_KEY="2")
    for _ in range(2):
        assert get(client, VERIFY, org.owner_key).status_code == 200
    assert get(client, VERIFY, org.owner_key).status_code == 429
    response = get(client, VERIFY, org.readonly_key)
    assert response.status_code == 200
    assert response.headers["X-RateLimit-Remaining"] == "1"


def test_sessions_use_the_session_bucket_per_user(client: Any, org: Org) -> None:
    reconfigure(RATE_LIMIT_SESSION="1", RATE_LIMIT_API_KEY="1")

    from chalicelib.directory.users import create_user

    people = {
        name: create_user(organization_id=org.organization_id, name=name, email=f"{name}@example.com", now=NOW).user_id
        for name in ("alice", "bob")
    }

    def token(user: str) -> str:
        claims = {"sub": people[user], "org": org.organization_id, "role": "viewer", "exp": int(time.time()) + 600}
        return jwt.encode(claims, "test-jwt-secret", algorithm="HS256")

    response = get(client, VERIFY, token("alice"))
    assert response.status_code == 200
    assert response.headers["X-RateLimit-Category"] == "session"
    assert get(client, VERIFY, token("alice")).status_code == 429
    assert get(client, VERIFY, token("bob")).status_code == 200
    # Session traffic does not spend the API key's bucket.
    assert get(client, VERIFY, org.owner_key).status_code == 200


def test_public_status_reads_have_their_own_bucket(client: Any, org: Org) -> None:
    """Failed API calls from an office's NAT address must not take its status page down during an
    outage: public status reads are counted per address in a bucket of their own."""
    from chalicelib.statuspage import pages

    pages.create_page(organization_id=org.organization_id, name="Acme", slug="acme", now=NOW)
    reconfigure(RATE_LIMIT_ANONYMOUS="2")
    for _ in range(2):
        assert get(client, VERIFY, "tcs_" + "a" * 40).status_code == 401
    assert get(client, VERIFY, "tcs_" + "a" * 40).status_code == 429  # the anonymous bucket is spent
    for path in ("/status/acme/summary.json", "/status/acme", "/status/acme/components.json"):
        response = get(client, path, None)
        assert response.status_code == 200, (path, response.body)
        assert response.headers["X-RateLimit-Category"] == "public_status"
        assert response.headers["X-RateLimit-Limit"] == "1200"
    # ... and status reads do not spend the anonymous bucket either.
    reconfigure(RATE_LIMIT_ANONYMOUS="120", RATE_LIMIT_PUBLIC_STATUS="4")  # three reads spent above
    assert get(client, "/status/acme/summary.json", None).status_code == 200
    assert get(client, "/status/acme/summary.json", None).status_code == 429
    assert get(client, VERIFY, "tcs_" + "b" * 40).headers["X-RateLimit-Remaining"] == "116"
