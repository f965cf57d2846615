"""The console client of the tests: a browser without script over chalice.test.Client. It keeps
cookies, reads each page's CSRF token and sends it with the next form, and follows nothing by
itself (`follow` does, when asked)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from tests.e2e.browser import Element, parse

PASSWORD = "correct horse battery staple"
CONFIRMED = {"confirm": "yes"}  # the second step of an action that asks first (revoke, delete, ...)


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


def action_forms(answer: Answer) -> list[str]:
    """The actions of a page's POST forms, signing out aside: a viewer's pages must have none."""
    return [
        str(form.attrs.get("action"))
        for form in answer.dom().find_all("form")
        if (form.attrs.get("method") or "").lower() == "post"
        and not str(form.attrs.get("action")).endswith("/sign-out")
    ]
