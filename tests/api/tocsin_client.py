"""The `tocsin` command against the app in process: a `requests`-shaped transport over
chalice.test.Client, and a runner that returns the exit status and both output streams."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

from chalicelib.client.http import Api
from chalicelib.client.main import run

BASE_URL = "http://tocsin.test"


@dataclass
class Answer:
    status_code: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


@dataclass
class InProcess:
    """What the client needs of requests.Session, answered by the app in process. `refuse` may
    answer a request instead of the app (a server refusal mid-apply)."""

    client: Any
    seen: list[tuple[str, str]] = field(default_factory=list)
    refuse: Callable[[str, str, Any], Answer | None] | None = None

    def request(self, method: str, url: str, **kwargs: Any) -> Answer:
        parts = urlsplit(url)
        path = parts.path
        if kwargs.get("params"):
            path += "?" + urlencode(kwargs["params"])
        self.seen.append((method, path))
        body = kwargs.get("json")
        if self.refuse is not None:
            refused = self.refuse(method, path, body)
            if refused is not None:
                return refused
        headers = dict(kwargs.get("headers") or {})
        raw = b""
        if body is not None:
            raw = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        answer = self.client.http.request(method, path, headers=headers, body=raw)
        return Answer(answer.status_code, dict(answer.headers), answer.body.decode() if answer.body else "")


@dataclass
class Ran:
    status: int
    out: str
    err: str


def tocsin(
    transport: InProcess, key: str, *argv: str, now: datetime, stdin: str = "", environ: dict[str, str] | None = None
) -> Ran:
    out, err = io.StringIO(), io.StringIO()
    status = run(
        ["--url", BASE_URL, "--key", key, *argv],
        out=out,
        err=err,
        stdin=io.StringIO(stdin),
        environ=environ or {},
        transport=transport,
        clock=lambda: now,
    )
    return Ran(status, out.getvalue(), err.getvalue())


def api(transport: InProcess, key: str) -> Api:
    return Api(base_url=BASE_URL, key=key, transport=transport, sleep=lambda _: None)
