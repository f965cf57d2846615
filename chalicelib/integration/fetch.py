"""The two outbound fetches inbound webhooks need: SNS signing certificates and subscription
confirmations. Both only ever go to URLs the SNS checks accepted first."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from chalicelib.integration.parsers.sns import CertificateNotFound
from chalicelib.settings import Settings

MAX_CERTIFICATE_BYTES = 64 * 1024
TIMEOUT_SECONDS = 5


def fetch_certificate(url: str, *, settings: Settings) -> bytes:
    """The certificate's bytes. CertificateNotFound when the host says it has no such certificate
    (HTTP 4xx) or the host name does not exist: SNS never signs with one, so the message is forged.
    Anything else (timeout, refused, 5xx) propagates: a fault on the way, worth a retry."""
    try:
        with urllib.request.urlopen(_request(url, settings=settings), timeout=TIMEOUT_SECONDS) as response:
            return bytes(response.read(MAX_CERTIFICATE_BYTES + 1))
    except urllib.error.HTTPError as refused:
        if 300 <= refused.code < 500:  # a redirect urllib would not follow counts as "not here" too
            raise CertificateNotFound(f"{url} answered {refused.code}") from None
        raise
    except urllib.error.URLError as failed:
        reason = failed.reason
        if isinstance(reason, socket.gaierror) and reason.errno == socket.EAI_NONAME:
            raise CertificateNotFound(f"{url}: no such host") from None
        raise


def confirm_subscription(subscribe_url: str, *, settings: Settings) -> None:
    with urllib.request.urlopen(_request(subscribe_url, settings=settings), timeout=TIMEOUT_SECONDS) as response:
        response.read(MAX_CERTIFICATE_BYTES)


def _request(url: str, *, settings: Settings) -> urllib.request.Request:
    """In the local stage the emulator serves what SNS URLs point at (its signing certificates),
    under the same sns.<region>.amazonaws.com host: send the request there with that Host header.
    The URL has already passed the strict SNS host check; nothing is widened."""
    if settings.is_local and settings.local_sns_certificate_endpoint:
        parts = urlsplit(url)
        target = settings.local_sns_certificate_endpoint.rstrip("/") + parts.path
        if parts.query:
            target += "?" + parts.query
        region = parts.netloc.split(".")[1] if parts.netloc.count(".") >= 3 else "us-east-1"
        # moto picks the service from the request's credential scope, not from the Host header.
        scope = f"Credential=local/20260101/{region}/sns/aws4_request, SignedHeaders=host, Signature=local"
        return urllib.request.Request(target, headers={"Authorization": f"AWS4-HMAC-SHA256 {scope}"})
    return urllib.request.Request(url)
