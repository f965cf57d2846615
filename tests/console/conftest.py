"""Console fixtures: a Cognito pool on the in-process emulator, a person per role, and a small
cookie-keeping client over chalice.test.Client that signs in through the real form."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.conftest import NOW, Org, reconfigure
from tests.e2e.browser import Element, parse

PASSWORD = "correct horse battery staple"
CONFIRMED = {"confirm": "yes"}  # the second step of an action that asks first (revoke, delete, ...)
ROLES = ("owner", "admin", "responder", "viewer")


@dataclass
class Answer:
    status: int
    headers: dict[str, Any]
    body: str

    @property
    def location(self) -> str:
        return str(self.headers.get("location") or self.headers.get("Location") or "")

    def dom(self) -> Element:
        return parse(self.body)

    def text(self) -> str:
        return parse(self.body).text()


@dataclass
class ConsoleClient:
    """A browser without script: keeps cookies, reads each page's CSRF token, follows nothing by itself."""

    http: Any
    cookies: dict[str, str] = field(default_factory=dict)
    csrf_token: str = ""

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = dict(extra or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return headers

    def _keep(self, response: Any) -> Answer:
        raw = {k.lower(): v for k, v in response.headers.items()}
        set_cookies = raw.get("set-cookie") or []
        for line in [set_cookies] if isinstance(set_cookies, str) else set_cookies:
            name, _, rest = line.partition("=")
            value = rest.split(";")[0]
            if "Max-Age=0" in line:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
        body = response.body.decode() if isinstance(response.body, bytes) else str(response.body or "")
        answer = Answer(response.status_code, raw, body)
        if "text/html" in str(raw.get("content-type", "")):
            tokens = [e.attrs.get("value") for e in answer.dom().find_all("input", name="csrf_token")]
            if tokens and tokens[0]:
                self.csrf_token = str(tokens[0])
        return answer

    def get(self, path: str) -> Answer:
        return self._keep(self.http.get(path, headers=self._headers()))

    def post(
        self, path: str, fields: dict[str, Any] | list[tuple[str, str]] | None = None, *, csrf: str | None = None
    ) -> Answer:
        items = list(fields.items()) if isinstance(fields, dict) else list(fields or [])
        token = self.csrf_token if csrf is None else csrf
        if token != "-":
            items.append(("csrf_token", token))
        body = urlencode(items, doseq=True)
        headers = self._headers({"Content-Type": "application/x-www-form-urlencoded"})
        return self._keep(self.http.post(path, headers=headers, body=body))

    def follow(self, answer: Answer) -> Answer:
        assert answer.status in (302, 303), (answer.status, answer.body[:500])
        return self.get(answer.location)

    def sign_in(self, email: str, password: str = PASSWORD) -> Answer:
        self.get("/app/sign-in")
        return self.post("/app/sign-in", {"email": email, "password": password})


@pytest.fixture
def cognito_pool(aws_env: None) -> tuple[str, str]:
    from chalicelib.identity.pool import create_pool

    pool_id, client_id = create_pool()
    reconfigure(COGNITO_USER_POOL_ID=pool_id, COGNITO_CLIENT_ID=client_id)
    return pool_id, client_id


@dataclass(frozen=True)
class Person:
    user_id: str
    email: str
    role: str
    name: str


@pytest.fixture
def people(org: Org, cognito_pool: tuple[str, str]) -> dict[str, Person]:
    """One directory user per role, each with a Cognito login (PASSWORD)."""
    from chalicelib.directory.users import create_user
    from chalicelib.identity import pool as identity_pool

    found = {}
    for role in ROLES:
        email = f"{role}@acme.test"
        name = f"{role.title()} Person"
        user = create_user(organization_id=org.organization_id, name=name, email=email, now=NOW, role=role)
        identity_pool.create_user(email=email, organization_id=org.organization_id, name=name, password=PASSWORD)
        found[role] = Person(user.user_id, email, role, name)
    return found


@pytest.fixture
def console_http(client: Any) -> Any:
    return client.http


@pytest.fixture
def browser(client: Any) -> ConsoleClient:
    """A browser that has not signed in."""
    return ConsoleClient(client.http)


@pytest.fixture
def signed_in(client: Any, people: dict[str, Person]) -> Callable[[str], ConsoleClient]:
    """signed_in("viewer") -> a browser signed in as that role's person (a new browser per call)."""

    def sign_in(role: str) -> ConsoleClient:
        browser = ConsoleClient(client.http)
        answer = browser.sign_in(people[role].email)
        assert answer.status == 303, answer.body[:1000]
        return browser

    return sign_in


@pytest.fixture
def as_owner(signed_in: Callable[[str], ConsoleClient]) -> Iterator[ConsoleClient]:
    yield signed_in("owner")


def action_forms(answer: Answer) -> list[str]:
    """The actions of a page's POST forms, signing out aside: a viewer's pages must have none."""
    return [
        str(form.attrs.get("action"))
        for form in answer.dom().find_all("form")
        if (form.attrs.get("method") or "").lower() == "post"
        and not str(form.attrs.get("action")).endswith("/sign-out")
    ]
