"""Responses the operation pipeline does not produce still carry the rate-limit headers."""

from __future__ import annotations

from typing import Any

from tests.conftest import Org


def test_404_and_405_carry_rate_limit_headers(client: Any, org: Org) -> None:
    not_found = client.http.get("/nope")
    assert not_found.status_code == 404
    assert not_found.headers["X-RateLimit-Category"] == "anonymous"
    not_allowed = client.http.put("/api/v1/auth/verify", headers={"Authorization": f"Bearer {org.owner_key}"})
    assert not_allowed.status_code == 405
    assert int(not_allowed.headers["X-RateLimit-Remaining"]) >= 0
    assert "X-RateLimit-Reset" in not_allowed.headers
