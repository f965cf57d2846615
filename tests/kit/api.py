"""The API client of the tests: one request helper over chalice.test.Client, in place of the
`def call(` each API test file used to write for itself.

`call(client, "POST", path, key, body)` sends `body` as JSON (a str or bytes body goes as it is),
with `key` as the bearer credential (an API key or a session JWT: `session_jwt`), and answers a
`Reply`: status, headers, body and the parsed JSON. A reply unpacks and indexes as `(status, json)`,
the pair most tests check: `status, document = call(...)`, `call(...)[0] == 200`. `ApiClient` is
the same with a default key.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

JWT_SECRET = "test-jwt-secret"  # tests/conftest.py sets it as the environment's JWT_SECRET


@dataclass
class Reply:
    status: int
    headers: Mapping[str, Any]
    body: bytes
    json: Any = field(init=False)

    def __post_init__(self) -> None:
        self.json = json.loads(self.body) if self.body else None

    def __iter__(self) -> Iterator[Any]:
        return iter((self.status, self.json))

    def __getitem__(self, index: int) -> Any:
        return (self.status, self.json)[index]

    @property
    def status_code(self) -> int:
        return self.status

    @property
    def text(self) -> str:
        return self.body.decode(errors="replace")

    @property
    def data(self) -> Any:
        assert self.json is not None and self.json.get("success") is True, (self.status, self.text[:500])
        return self.json["data"]

    @property
    def error_code(self) -> str:
        assert self.json is not None and self.json.get("success") is False, (self.status, self.text[:500])
        return str(self.json["error"]["code"])

    @property
    def fields(self) -> list[str]:
        """The fields a validation error names."""
        assert self.json is not None and self.json.get("success") is False, (self.status, self.text[:500])
        return [problem["field"] for problem in self.json["error"]["details"]["fields"]]


def _http(client: Any) -> Any:
    return getattr(client, "http", client)


def call(
    client: Any,
    method: str,
    path: str,
    key: str | None = None,
    body: Any = None,
    *,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """One request: `key` as `Authorization: Bearer`, `body` as JSON (str/bytes as they are)."""
    sent: dict[str, str] = {}
    if body is not None:
        sent["Content-Type"] = "application/json"
    if key:
        sent["Authorization"] = f"Bearer {key}"
    sent.update(headers or {})
    raw = body if isinstance(body, str | bytes) else (json.dumps(body) if body is not None else b"")
    response = _http(client).request(method.upper(), path, headers=sent, body=raw)
    content = response.body if isinstance(response.body, bytes) else str(response.body or "").encode()
    return Reply(response.status_code, response.headers, content)


@dataclass
class ApiClient:
    """`call` with a default credential: `api.post(path, body)`, `api.as_(key).get(path)`."""

    client: Any
    key: str | None = None

    def as_(self, key: str | None) -> ApiClient:
        return ApiClient(self.client, key)

    def call(self, method: str, path: str, body: Any = None, *, headers: Mapping[str, str] | None = None) -> Reply:
        return call(self.client, method, path, self.key, body, headers=headers)

    def get(self, path: str, *, headers: Mapping[str, str] | None = None) -> Reply:
        return self.call("GET", path, headers=headers)

    def post(self, path: str, body: Any = None, *, headers: Mapping[str, str] | None = None) -> Reply:
        return self.call("POST", path, body, headers=headers)

    def put(self, path: str, body: Any = None, *, headers: Mapping[str, str] | None = None) -> Reply:
        return self.call("PUT", path, body, headers=headers)

    def patch(self, path: str, body: Any = None, *, headers: Mapping[str, str] | None = None) -> Reply:
        return self.call("PATCH", path, body, headers=headers)

    def delete(self, path: str, *, headers: Mapping[str, str] | None = None) -> Reply:
        return self.call("DELETE", path, headers=headers)


def session_jwt(
    organization_id: str, user_id: str, role: Any = "viewer", *, secret: str = JWT_SECRET, **claims: Any
) -> str:
    """A session JWT as the console's sign-in issues one (HS256, 10 minutes); `claims` override
    or add (a None value drops the claim)."""
    import jwt

    payload: dict[str, Any] = {"sub": user_id, "org": organization_id, "role": role, "exp": int(time.time()) + 600}
    payload.update(claims)
    return jwt.encode({k: v for k, v in payload.items() if v is not None}, secret, algorithm="HS256")
