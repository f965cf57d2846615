"""One HTTP POST to a URL a customer gave: the target checked, the body signed, sent with a
timeout, the answer classified. Every such POST Tocsin makes goes through `post` (outbound
webhook subscriptions, status-page webhook followers; a channel posting to a customer's
incoming-webhook URL would too). It is one attempt: retrying is the caller's schedule
(chalicelib/delivery/attempts.py). Calls to providers' own APIs (Slack's Web API, Twilio, SES,
SNS) are not to customers' URLs and keep their clients.

The target is checked right before sending (chalicelib/delivery/targets.py: DNS may have changed
since the URL was saved) and the connection goes to the address that check accepted, never to a
second resolution; TLS still checks the certificate for the URL's host name. Redirects are not
followed (the target was checked, its redirect was not).

The answer: any 2xx is delivered; 408, 429, 5xx, a timeout or a failed connection are
retryable (the receiver may recover by itself); any other 3xx or 4xx, and a target the check
refused, are final.
"""

from __future__ import annotations

import functools
import http.client
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from chalicelib import clock
from chalicelib.delivery import targets
from chalicelib.delivery.schedule import Verdict
from chalicelib.delivery.signature import signed_headers
from chalicelib.errors import ValidationFailed
from chalicelib.settings import Settings

USER_AGENT = "Tocsin-Webhooks/1.0"
REQUEST_TIMEOUT_SECONDS = 10.0
_RETRYABLE_CLIENT_ERRORS = frozenset({408, 429})


@dataclass(frozen=True)
class Answer:
    """What one POST came to: a status code, or an error before any answer (timeout, refused)."""

    verdict: Verdict
    response_code: int | None
    error: str | None  # None when delivered; otherwise what a delivery record keeps as last_error
    # The first 64 KiB of the answer's body (a provider's id, or its own words for a refusal).
    body: bytes = b""

    @property
    def succeeded(self) -> bool:
        return self.verdict == "delivered"

    @property
    def retryable(self) -> bool:
        return self.verdict == "retryable"


def from_response(status: int, reason: str = "", body: bytes = b"") -> Answer:
    if 200 <= status < 300:
        return Answer("delivered", status, None, body)
    detail = f"HTTP {status}{' ' + reason if reason else ''}"
    if status in _RETRYABLE_CLIENT_ERRORS or status >= 500:
        return Answer("retryable", status, detail, body)
    if 300 <= status < 400:
        return Answer("final", status, f"{detail} (redirects are not followed)", body)
    return Answer("final", status, f"{detail} (the receiver rejected the event)", body)


def from_error(kind: str, detail: str) -> Answer:
    """No answer: `kind` is timeout, connection or target (the URL failed its check)."""
    if kind == "timeout":
        return Answer("retryable", None, f"timed out after {REQUEST_TIMEOUT_SECONDS:g} s")
    if kind == "target":
        return Answer("final", None, f"target refused: {detail}")
    return Answer("retryable", None, f"connection failed: {detail}")


def post(
    url: str,
    body: bytes,
    *,
    secret: str | None,
    headers: Mapping[str, str] | None = None,
    content_type: str = "application/json",
    allow_local: bool | None = None,
    timeout: float = REQUEST_TIMEOUT_SECONDS,
    settings: Settings,
) -> Answer:
    """POST `body` to `url`, signed with `secret` (X-Service-Timestamp and X-Service-Signature
    over the body at this second; None: unsigned), `headers` added after. `allow_local`: the
    local stage's rule (plain http to any address) when None."""
    sent = {"Content-Type": content_type, "User-Agent": USER_AGENT}
    if secret is not None:
        sent.update(signed_headers(secret, int(clock.now().timestamp()), body))
    sent.update(headers or {})
    if allow_local is None:
        allow_local = targets.local_targets_allowed(settings=settings)
    # The resolver is looked up per call, so tests can replace targets.default_resolve.
    return post_checked(
        url, body, sent, allow_local=allow_local, resolve=targets.default_resolve, timeout=timeout, settings=settings
    )


def post_checked(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    allow_local: bool,
    resolve: targets.Resolver = targets.default_resolve,
    timeout: float = REQUEST_TIMEOUT_SECONDS,
    settings: Settings,
) -> Answer:
    """Check the target, then POST to the very address the check accepted."""
    try:
        target = targets.check_target(url, allow_local=allow_local, resolve=resolve, settings=settings)
    except ValidationFailed as error:
        return from_error("target", error.message)
    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    address = target.addresses[0] if target.addresses else target.host  # an IP literal, or the local stage: as written
    connection = connection_to(target.scheme, target.host, target.port, address, timeout)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        # Read a little (the receiver sees a clean close, a provider's answer is kept); the rest is ignored.
        answered = response.read(65536)
        return from_response(response.status, response.reason or "", answered)
    except TimeoutError:
        return from_error("timeout", "")
    except (OSError, http.client.HTTPException) as error:
        return from_error("connection", f"{type(error).__name__}: {error}"[:300])
    finally:
        connection.close()


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The system's trust store and hostname checking; built once (loading the CAs takes a while)."""
    return ssl.create_default_context()


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """TLS to `address`, with the certificate checked for the URL's host name (SNI too)."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        self._tls = tls_context()
        super().__init__(host, port, timeout=timeout, context=self._tls)
        self._address = address

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(raw, server_hostname=self.host)


def connection_to(scheme: str, host: str, port: int, address: str, timeout: float) -> http.client.HTTPConnection:
    """A connection to `host` (its Host header, its certificate) made to `address`."""
    if scheme == "https":
        return _PinnedHTTPSConnection(host, port, address, timeout)
    return _PinnedHTTPConnection(host, port, address, timeout)
