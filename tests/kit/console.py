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


def problems_at(answer: Answer, name: str) -> list[str]:
    """The problems the page shows next to the form input named `name` (in the field's box, the
    fieldset or the table cell holding it): where the console puts a refused form's problem, once."""
    found: list[str] = []
    for box in answer.dom().iter():
        if not (box.tag in ("fieldset", "td") or (box.tag == "div" and "field" in box.classes)):
            continue
        controls = [e for e in box.iter() if e.tag in ("input", "select", "textarea") and e.attrs.get("name") == name]
        if controls:
            found += [p.text() for p in box.find_all("p", cls="field-error") if p.text() not in found]
    return found


def problem_named(answer: Answer, name: str, label: str) -> list[str]:
    """Every place the page states a problem of the input `name`: next to it (`problems_at`), and
    in the list at the top, where it is named by the form's label ("Kind: ...": `label` is how the
    item starts). A refused form states each problem exactly once."""
    summary = answer.dom().find_all("div", cls="problem")
    listed = [li.text() for box in summary for li in box.find_all("li") if li.text().startswith(label)]
    return problems_at(answer, name) + listed


def form_values(answer: Answer, action: str) -> list[tuple[str, str]]:
    """What the browser would send for the POST form whose action ends with `action`, untouched:
    text, hidden and number inputs, ticked checkboxes and radios, each select's chosen option (the
    CSRF token left out: `post` adds the page's)."""
    (form,) = [f for f in answer.dom().find_all("form") if str(f.attrs.get("action") or "").endswith(action)]
    sent: list[tuple[str, str]] = []
    for element in form.iter():
        name = str(element.attrs.get("name") or "")
        if not name or name == "csrf_token":
            continue
        kind = str(element.attrs.get("type") or "text")
        if element.tag == "input" and kind in ("checkbox", "radio"):
            if "checked" in element.attrs:
                sent.append((name, str(element.attrs.get("value") or "on")))
        elif element.tag == "input" and kind not in ("submit", "button"):
            sent.append((name, str(element.attrs.get("value") or "")))
        elif element.tag == "select":
            options = element.find_all("option")
            chosen = [o for o in options if "selected" in o.attrs] or options[:1]
            sent += [(name, str(o.attrs.get("value") or "")) for o in chosen]
        elif element.tag == "textarea":
            sent.append((name, element.text()))
    return sent


def replaced(fields: list[tuple[str, str]], **changes: str | list[str]) -> list[tuple[str, str]]:
    """`fields` with every value of each named field replaced (a list: several values, [] none)."""
    kept = [(name, value) for name, value in fields if name not in changes]
    for name, value in changes.items():
        kept += [(name, v) for v in (value if isinstance(value, list) else [value])]
    return kept
