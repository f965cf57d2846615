"""Talking to a vendor's REST API: its credentials refused (401) is one clear message, a 429 is
waited out for as long as the vendor's Retry-After says (bounded), and any other failure names
what was asked and what came back. The Opsgenie client lives here; PagerDuty's reader uses the
official client (chalicelib.client.importers.pagerduty_reader) with the same rules."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast
from urllib.parse import parse_qs, urlsplit

MAX_RATE_LIMITED = 8  # 429s in a row before giving up
MAX_WAIT_SECONDS = 120.0
DEFAULT_WAIT_SECONDS = 5.0
TIMEOUT_SECONDS = 30.0
OPSGENIE_PAGE = 100


class VendorError(Exception):
    """A vendor answered with a failure: one line for the person running the import."""


class VendorUnavailable(VendorError):
    """The vendor does not offer this (404) or not to this key (403): the section is skipped."""


def retry_after(headers: Mapping[str, str] | None, attempt: int) -> float:
    """Seconds to wait before asking again: Retry-After (or Opsgenie's X-RateLimit-Period-In-Sec),
    else a doubling wait, never more than MAX_WAIT_SECONDS."""
    for name in ("Retry-After", "X-RateLimit-Period-In-Sec"):
        value: object = headers.get(name) if headers is not None else None
        if value is None:
            continue
        try:
            return max(0.0, min(float(str(value)), MAX_WAIT_SECONDS))
        except ValueError:
            continue
    return min(DEFAULT_WAIT_SECONDS * 2.0**attempt, MAX_WAIT_SECONDS)


class Response(Protocol):
    status_code: int
    headers: Any
    text: str

    def json(self) -> Any: ...


class Transport(Protocol):
    def request(self, method: str, url: str, **kwargs: Any) -> Response: ...


def _message(response: Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200].strip()
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            return str(error.get("message") or error)
        return str(body.get("message") or body)[:200]
    return str(body)[:200]


@dataclass
class OpsgenieClient:
    """Opsgenie's REST API at `base_url` (https://api.opsgenie.com, https://api.eu.opsgenie.com, or a
    stand-in) with a GenieKey."""

    base_url: str
    key: str
    transport: Transport
    sleep: Callable[[float], None] = time.sleep
    calls: int = field(default=0)
    waited: list[float] = field(default_factory=list)

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        url = self.base_url.rstrip("/") + path
        headers = {"Authorization": f"GenieKey {self.key}", "Accept": "application/json"}
        for attempt in range(MAX_RATE_LIMITED + 1):
            self.calls += 1
            try:
                response = self.transport.request(
                    "GET", url, params=params or {}, headers=headers, timeout=TIMEOUT_SECONDS
                )
            except OSError as error:
                raise VendorError(f"Opsgenie: cannot reach {self.base_url}: {error}") from error
            if response.status_code == 429 and attempt < MAX_RATE_LIMITED:
                wait = retry_after(response.headers, attempt)
                self.waited.append(wait)
                self.sleep(wait)
                continue
            if response.status_code == 401:
                raise VendorError(
                    "Opsgenie refused the API key (401): check --opsgenie-key or OPSGENIE_API_KEY, and --opsgenie-url "
                    "for an EU account (https://api.eu.opsgenie.com)"
                )
            if response.status_code in (403, 404):
                raise VendorUnavailable(f"GET {path}: {response.status_code} {_message(response)}")
            if not 200 <= response.status_code < 300:
                raise VendorError(f"Opsgenie: GET {path}: {response.status_code} {_message(response)}")
            try:
                return response.json()
            except ValueError as error:
                raise VendorError(f"Opsgenie: GET {path}: the answer is not JSON") from error
        raise VendorError(f"Opsgenie: GET {path}: still rate limited (429) after {MAX_RATE_LIMITED} waits")

    def data(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.get(path, params).get("data")

    def each(self, path: str, params: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        """Every item of a list, page by page (offset and limit; the next page is `paging.next`)."""
        query: dict[str, Any] = {**(params or {}), "limit": OPSGENIE_PAGE, "offset": 0}
        while True:
            body = self.get(path, query)
            items = body.get("data") or []
            yield from items
            following = (body.get("paging") or {}).get("next")
            if not following or not items:
                return
            given = parse_qs(urlsplit(str(following)).query)
            offset = int(given.get("offset", [query["offset"] + len(items)])[0])
            if offset <= int(query["offset"]):
                return  # a next page that goes nowhere: stop rather than loop
            query = {**query, "offset": offset, "limit": int(given.get("limit", [OPSGENIE_PAGE])[0])}


def opsgenie_client(base_url: str, key: str, transport: Transport | None = None) -> OpsgenieClient:
    if transport is None:
        import requests
        from requests.adapters import HTTPAdapter

        from chalicelib.client.importers import trust

        class Trusting(HTTPAdapter):
            """HTTPS trusting every CA the environment names, whichever variable names it."""

            def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
                kwargs["ssl_context"] = trust.context()
                super().init_poolmanager(*args, **kwargs)

        session = requests.Session()
        session.mount("https://", Trusting())
        return OpsgenieClient(base_url, key, cast(Transport, session))
    return OpsgenieClient(base_url, key, transport)
