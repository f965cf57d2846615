"""Amazon SNS HTTP(S) message verification (SignatureVersion 1 = SHA1withRSA, 2 = SHA256withRSA).

String to sign: "Key\\nValue\\n" for each key, in this order.
    Notification:                       Message, MessageId, Subject (if present), Timestamp, TopicArn, Type
    (Un)SubscriptionConfirmation:       Message, MessageId, SubscribeURL, Timestamp, Token, TopicArn, Type
The signing certificate comes from `SigningCertURL` through an injected `fetch_certificate(url)`
(the only I/O, so tests pass a fake); the URL must be https (http only when the caller allows it,
for the local emulator), on a host matching `allowed_cert_host_pattern`, on the default port
(any port only where http is allowed), with a path ending `.pem`. Parsed certificates are cached
by URL (bounded). Every verification failure is INVALID_SIGNATURE; a malformed envelope is
INVALID_PAYLOAD. A fetcher raises `CertificateNotFound` when the host says the certificate does not
exist (a forgery: not retryable); any other fetch failure is INVALID_SIGNATURE marked retryable
(the caller answers 5xx so a genuine message is retried).
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.exceptions import InvalidSignature as SignatureMismatch
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from chalicelib.errors import InvalidPayload, InvalidSignature
from chalicelib.integration.normalized import get_header
from chalicelib.integration.parsers._common import json_type, load_json_object

CertificateFetcher = Callable[[str], bytes]

DEFAULT_CERT_HOST_PATTERN: Final = r"^sns\.[a-zA-Z0-9-]{3,}\.amazonaws\.com(\.cn)?$"
MESSAGE_TYPE_HEADER: Final = "x-amz-sns-message-type"
NOTIFICATION: Final = "Notification"
SUBSCRIPTION_CONFIRMATION: Final = "SubscriptionConfirmation"
UNSUBSCRIBE_CONFIRMATION: Final = "UnsubscribeConfirmation"
MESSAGE_TYPES: Final = (NOTIFICATION, SUBSCRIPTION_CONFIRMATION, UNSUBSCRIBE_CONFIRMATION)
NOTIFICATION_KEYS: Final = ("Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type")
CONFIRMATION_KEYS: Final = ("Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type")
OPTIONAL_KEYS: Final = frozenset({"Subject"})
SIGNATURE_HASHES: Final[Mapping[str, Callable[[], hashes.HashAlgorithm]]] = {"1": hashes.SHA1, "2": hashes.SHA256}
CERT_CACHE_MAX: Final = 32
CERT_MAX_BYTES: Final = 64 * 1024

_DEFAULT_PORTS: Final = {"https": 443, "http": 80}

_cert_cache: OrderedDict[str, x509.Certificate] = OrderedDict()
_cert_lock = threading.Lock()


class CertificateNotFound(Exception):
    """Raised by a certificate fetcher when the host answered that no such certificate exists."""


@dataclass(frozen=True)
class SnsMessage:
    """A verified SNS message."""

    type: str
    message_id: str
    topic_arn: str
    message: str
    timestamp: str
    signature_version: str
    subject: str | None = None
    subscribe_url: str | None = None
    token: str | None = None
    unsubscribe_url: str | None = None


def clear_certificate_cache() -> None:
    with _cert_lock:
        _cert_cache.clear()


def signed_keys(message_type: str) -> tuple[str, ...]:
    return NOTIFICATION_KEYS if message_type == NOTIFICATION else CONFIRMATION_KEYS


def string_to_sign(message: Mapping[str, Any]) -> bytes:
    """The canonical bytes SNS signs: "Key\\nValue\\n" for each present key of the message's type."""
    parts = []
    for key in signed_keys(str(message.get("Type"))):
        value = message.get(key)
        if value is None and key in OPTIONAL_KEYS:
            continue
        parts.append(f"{key}\n{value}\n")
    return "".join(parts).encode("utf-8")


@functools.lru_cache(maxsize=16)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def check_sns_url(
    url: object,
    *,
    what: str,
    allowed_host_pattern: str | re.Pattern[str] = DEFAULT_CERT_HOST_PATTERN,
    allow_http: bool = False,
    require_pem: bool = False,
) -> str:
    """`url` when it is https (or http if allowed) on an allowed SNS host; else INVALID_SIGNATURE."""
    if not isinstance(url, str) or not url or len(url) > 2048:
        raise InvalidSignature(f"{what} is missing or not a string.")
    pattern = allowed_host_pattern if isinstance(allowed_host_pattern, re.Pattern) else _compiled(allowed_host_pattern)
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port  # raises ValueError on a malformed port
    except ValueError:
        raise InvalidSignature(f"{what} is not a valid URL.") from None
    schemes = ("https", "http") if allow_http else ("https",)
    scheme = parts.scheme.lower()
    if scheme not in schemes:
        raise InvalidSignature(f"{what} must use https.")
    # SNS serves on the default port only; any other one points somewhere SNS does not answer.
    # Where http is allowed (the local stage's emulator) the emulator's own port is fine.
    if port is not None and port != _DEFAULT_PORTS[scheme] and not allow_http:
        raise InvalidSignature(f"{what} must use the default https port.")
    if parts.username is not None or parts.password is not None or any(c.isspace() for c in url):
        raise InvalidSignature(f"{what} must not carry credentials or whitespace.")
    if not host or not pattern.fullmatch(host):
        raise InvalidSignature(f"{what} host {host!r} is not an Amazon SNS host.")
    if require_pem and (not parts.path.endswith(".pem") or parts.query or parts.fragment or "?" in url or "#" in url):
        raise InvalidSignature(f"{what} must point to a .pem certificate (no query).")
    return url


def parse_sns_envelope(headers: Mapping[str, str] | None, body: bytes | str) -> dict[str, Any]:
    """The SNS JSON envelope with its type and signed keys checked (not yet its signature)."""
    message = load_json_object(body, "The SNS message")
    message_type = message.get("Type")
    if message_type not in MESSAGE_TYPES:
        raise InvalidPayload(f"'Type' must be one of {', '.join(MESSAGE_TYPES)}.")
    header_type = get_header(headers, MESSAGE_TYPE_HEADER)
    if header_type and header_type != message_type:
        raise InvalidPayload(f"{MESSAGE_TYPE_HEADER} {header_type!r} does not match 'Type'.")
    problems = []
    for key in signed_keys(message_type):
        value = message.get(key)
        if value is None and key in OPTIONAL_KEYS:
            continue
        if not isinstance(value, str):
            problems.append(
                f"'{key}' is required in an SNS {message_type} and must be a string, not {json_type(value)}."
            )
    if problems:
        raise InvalidPayload.from_problems(problems)
    return message


def verify_sns_message(
    headers: Mapping[str, str] | None,
    body: bytes | str,
    *,
    fetch_certificate: CertificateFetcher,
    allowed_cert_host_pattern: str | re.Pattern[str] = DEFAULT_CERT_HOST_PATTERN,
    allow_http_cert_url: bool = False,
    expected_topic_arn: str | None = None,
    now: datetime | None = None,
) -> SnsMessage:
    """Verify an SNS delivery and return it. `now` (aware), when given, also checks the certificate's
    validity period. A SubscriptionConfirmation's SubscribeURL is checked like the certificate URL
    (any path) so the caller may fetch it."""
    message = parse_sns_envelope(headers, body)
    version = message.get("SignatureVersion")
    if not isinstance(version, str) or version not in SIGNATURE_HASHES:
        raise InvalidSignature(f"Unsupported SNS SignatureVersion {version!r}; expected '1' or '2'.")
    if expected_topic_arn and message["TopicArn"] != expected_topic_arn:
        raise InvalidSignature("The SNS message comes from a topic this integration does not accept.")
    options: dict[str, Any] = {"allowed_host_pattern": allowed_cert_host_pattern, "allow_http": allow_http_cert_url}
    cert_url = check_sns_url(message.get("SigningCertURL"), what="SigningCertURL", require_pem=True, **options)
    signature = _decode_signature(message.get("Signature"))
    certificate = _certificate(cert_url, fetch_certificate)
    public_key = certificate.public_key()
    if not isinstance(public_key, rsa.RSAPublicKey):
        raise InvalidSignature("The SNS signing certificate does not hold an RSA key.")
    if now is not None and not (certificate.not_valid_before_utc <= now <= certificate.not_valid_after_utc):
        raise InvalidSignature("The SNS signing certificate is not valid at this time.")
    try:
        public_key.verify(signature, string_to_sign(message), padding.PKCS1v15(), SIGNATURE_HASHES[version]())
    except (SignatureMismatch, ValueError, TypeError):
        raise InvalidSignature("The SNS message signature does not verify.") from None
    subscribe_url = None
    if message["Type"] == SUBSCRIPTION_CONFIRMATION:
        subscribe_url = check_sns_url(message["SubscribeURL"], what="SubscribeURL", **options)
    unsubscribe = message.get("UnsubscribeURL")
    return SnsMessage(
        type=message["Type"],
        message_id=message["MessageId"],
        topic_arn=message["TopicArn"],
        message=message["Message"],
        timestamp=message["Timestamp"],
        signature_version=version,
        subject=message.get("Subject") if isinstance(message.get("Subject"), str) else None,
        subscribe_url=subscribe_url,
        token=message.get("Token") if isinstance(message.get("Token"), str) else None,
        unsubscribe_url=unsubscribe if isinstance(unsubscribe, str) else None,
    )


def _decode_signature(value: object) -> bytes:
    if not isinstance(value, str) or not value:
        raise InvalidSignature("The SNS message has no Signature.")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidSignature("The SNS Signature is not valid base64.") from None


def _certificate(url: str, fetch_certificate: CertificateFetcher) -> x509.Certificate:
    with _cert_lock:
        cached = _cert_cache.get(url)
        if cached is not None:
            _cert_cache.move_to_end(url)
            return cached
    try:
        data = fetch_certificate(url)
    except CertificateNotFound:
        raise InvalidSignature("The SNS signing certificate URL names no certificate.") from None
    except Exception:
        raise InvalidSignature("The SNS signing certificate could not be fetched.", retryable=True) from None
    if not isinstance(data, bytes | bytearray) or not data or len(data) > CERT_MAX_BYTES:
        raise InvalidSignature("The SNS signing certificate is empty or too large.")
    try:
        certificate = x509.load_pem_x509_certificate(bytes(data))
    except ValueError:
        try:
            certificate = x509.load_der_x509_certificate(bytes(data))
        except ValueError:
            raise InvalidSignature("The SNS signing certificate is not a valid certificate.") from None
    with _cert_lock:
        _cert_cache[url] = certificate
        while len(_cert_cache) > CERT_CACHE_MAX:
            _cert_cache.popitem(last=False)
    return certificate
