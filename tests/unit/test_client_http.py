"""The client's HTTP: the envelope unwrapped, pages followed, 429/503 retried after Retry-After
(bounded, never slept for real here), the same Idempotency-Key on every retry of one create,
a POST without one never repeated after a dropped connection, errors as one readable line."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from chalicelib.client.http import MAX_ATTEMPTS, MAX_WAIT_SECONDS, Api, ApiError, ClientError


@dataclass
class Answer:
    status_code: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.body if isinstance(self.body, str) else json.dumps(self.body)

    def json(self) -> Any:
        if isinstance(self.body, str):
            raise ValueError("not JSON")
        return self.body


@dataclass
class Scripted:
    answers: list[Answer | Exception]
    requests: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    def request(self, method: str, url: str, **kwargs: Any) -> Answer:
        self.requests.append((method, url, kwargs))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def ok(data: Any) -> Answer:
    return Answer(200, {"success": True, "data": data, "meta": {}})


def failure(status: int, code: str, message: str, details: Any = None, headers: dict[str, str] | None = None) -> Answer:
    error = {"code": code, "message": message, **({"details": details} if details is not None else {})}
    return Answer(status, {"success": False, "error": error}, headers or {})


def client(*answers: Answer | Exception) -> tuple[Api, Scripted, list[float]]:
    slept: list[float] = []
    transport = Scripted(list(answers))
    return Api("https://tocsin.example/", "tk_secret", transport, sleep=slept.append), transport, slept


def test_a_call_sends_the_key_and_unwraps_the_envelope() -> None:
    api, transport, _ = client(ok({"valid": True}))
    assert api.get("/api/v1/auth/verify") == {"valid": True}
    method, url, kwargs = transport.requests[0]
    assert (method, url) == ("GET", "https://tocsin.example/api/v1/auth/verify")
    assert kwargs["headers"]["Authorization"] == "Bearer tk_secret"
    assert "json" not in kwargs and kwargs["timeout"] > 0


def test_lists_follow_every_page() -> None:
    api, transport, _ = client(
        ok({"items": [1, 2], "total": 3, "has_more": True, "next_offset": 2}),
        ok({"items": [3], "total": 3, "has_more": False, "next_offset": None}),
    )
    assert api.all("/api/v1/users", {"q": "a"}) == [1, 2, 3]
    assert [kwargs["params"] for _, _, kwargs in transport.requests] == [
        {"q": "a", "limit": 100, "offset": 0},
        {"q": "a", "limit": 100, "offset": 2},
    ]


def test_busy_answers_are_retried_after_retry_after_with_the_same_idempotency_key() -> None:
    api, transport, slept = client(
        failure(429, "RATE_LIMITED", "slow down", headers={"Retry-After": "2"}),
        failure(503, "SERVICE_UNAVAILABLE", "busy", headers={"Retry-After": "3600"}),
        Answer(201, {"success": True, "data": {"id": "evr_1"}}),
    )
    assert api.post("/api/v1/event-rules", {"actions": {"drop": True}}, idempotent=True) == {"id": "evr_1"}
    assert slept == [2.0, MAX_WAIT_SECONDS]  # the server's word, within bounds
    keys = {kwargs["headers"]["Idempotency-Key"] for _, _, kwargs in transport.requests}
    assert len(keys) == 1 and next(iter(keys)).startswith("tocsin-")
    assert [kwargs["json"] for _, _, kwargs in transport.requests] == [{"actions": {"drop": True}}] * 3


def test_a_plain_post_is_repeated_after_429_only() -> None:
    api, transport, slept = client(
        failure(429, "RATE_LIMITED", "slow down"), failure(503, "SERVICE_UNAVAILABLE", "busy")
    )
    with pytest.raises(ApiError) as raised:
        api.post("/api/v1/schedules", {"name": "Primary"})
    assert raised.value.status == 503 and len(transport.requests) == 2 and slept == [1.0]


def test_retries_are_bounded() -> None:
    api, transport, slept = client(*[failure(503, "SERVICE_UNAVAILABLE", "busy")] * MAX_ATTEMPTS)
    with pytest.raises(ApiError) as raised:
        api.get("/api/v1/users")
    assert raised.value.status == 503 and len(transport.requests) == MAX_ATTEMPTS
    assert slept == [1.0, 2.0, 4.0, 8.0]  # no Retry-After: doubling


def test_other_failures_are_not_retried_and_read_as_one_line() -> None:
    details = {"fields": [{"field": "name", "message": "required"}, {"field": "email", "message": "invalid"}]}
    api, transport, slept = client(failure(400, "VALIDATION_ERROR", "The request body is invalid.", details))
    with pytest.raises(ApiError) as raised:
        api.post("/api/v1/users", {"x": 1})
    assert str(raised.value) == (
        "POST /api/v1/users: 400 VALIDATION_ERROR: The request body is invalid. (name: required; email: invalid)"
    )
    assert len(transport.requests) == 1 and slept == []
    assert "Idempotency-Key" not in transport.requests[0][2]["headers"]


def test_an_answer_that_is_not_the_envelope() -> None:
    api, _, _ = client(Answer(502, "<html>Bad gateway</html>"))
    with pytest.raises(ApiError) as raised:
        api.get("/api/v1/users")
    assert (raised.value.status, raised.value.code) == (502, None)
    assert str(raised.value) == "GET /api/v1/users: 502 error: <html>Bad gateway</html>"
    unauthorized, _, _ = client(failure(401, "UNAUTHORIZED", "Missing or invalid credential."))
    with pytest.raises(ApiError) as refused:
        unauthorized.get("/api/v1/auth/verify")
    assert refused.value.unauthorized


def test_a_dropped_connection_repeats_reads_and_keyed_creates_but_never_a_plain_post() -> None:
    api, transport, _ = client(ConnectionError("reset"), ok({"items": [], "has_more": False}))
    assert api.get("/api/v1/teams") == {"items": [], "has_more": False}
    assert len(transport.requests) == 2
    api, transport, _ = client(ConnectionError("reset"))
    with pytest.raises(ClientError, match=re.escape("cannot reach https://tocsin.example/: reset")):
        api.post("/api/v1/users", {"email": "a@example.com"})
    assert len(transport.requests) == 1
    api, transport, _ = client(ConnectionError("reset"), Answer(201, {"success": True, "data": {"id": "mw_1"}}))
    assert api.post("/api/v1/maintenance-windows", {}, idempotent=True) == {"id": "mw_1"}
