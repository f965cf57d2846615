"""Inbound payload parsers, one module per source, and `parse`, the dispatcher.

`parse(source_type, headers, body, ...)` parses one delivery. The HMAC signatures (the custom
webhook's, Sentry's) are checked once, by the integration gate (`integration/gate.py`
`verify_signature`) before any bucket is charged, so they are not checked again here:
- custom: the shape picks the schema;
- legacy: the older `/v1/incidents` path of the custom webhook: exactly like custom (same shape
  detection, same validation), so an unknown service_id or a bad status is refused there too;
- cloudwatch: the SNS signature is part of the message, so it is checked here, always
  (`fetch_certificate` is required); `now` is not applied to the certificate's validity period
  (a frozen test clock would reject emulator certificates); call `sns.verify_sns_message(..., now=...)`
  directly for that check;
- sentry, newrelic, alertmanager, pagerduty: nothing beyond the gate.
- opsgenie: an Opsgenie create-alert body (the drop-in's `/v2/alerts` reads it with its own
  fields, chalicelib.integration.parsers.opsgenie); its field problems are INVALID_PAYLOAD here.
Everything raises a `DeliveryRejected` (chalicelib.errors) for a bad delivery; a ValueError only for a programming error
(unknown source type, a missing `fetch_certificate`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from chalicelib.errors import InvalidFields, InvalidPayload
from chalicelib.integration.normalized import NormalizedAlert, Source
from chalicelib.integration.parsers.alertmanager import parse_alertmanager
from chalicelib.integration.parsers.cloudwatch import parse_cloudwatch
from chalicelib.integration.parsers.custom import parse_custom
from chalicelib.integration.parsers.newrelic import parse_newrelic
from chalicelib.integration.parsers.opsgenie import parse_create
from chalicelib.integration.parsers.pagerduty import parse_pagerduty
from chalicelib.integration.parsers.sentry import parse_sentry
from chalicelib.integration.parsers.sns import DEFAULT_CERT_HOST_PATTERN, CertificateFetcher

SOURCE_TYPES: Final[tuple[Source, ...]] = (
    "custom",
    "legacy",
    "newrelic",
    "sentry",
    "alertmanager",
    "cloudwatch",
    "pagerduty",
    "opsgenie",
)

__all__ = ["DEFAULT_CERT_HOST_PATTERN", "SOURCE_TYPES", "CertificateFetcher", "parse"]


def parse(
    source_type: str,
    headers: Mapping[str, str] | None,
    body: bytes | str,
    *,
    fetch_certificate: CertificateFetcher | None = None,
    allowed_cert_host_pattern: str | re.Pattern[str] = DEFAULT_CERT_HOST_PATTERN,
    allow_http_cert_url: bool = False,
    expected_topic_arn: str | None = None,
) -> NormalizedAlert:
    """The normalized alert for one delivery of `source_type`, or a DeliveryRejected."""
    if source_type in ("custom", "legacy"):
        return parse_custom(body)
    if source_type == "newrelic":
        return parse_newrelic(body)
    if source_type == "sentry":
        return parse_sentry(headers, body)
    if source_type == "alertmanager":
        return parse_alertmanager(body)
    if source_type == "cloudwatch":
        if fetch_certificate is None:
            raise ValueError("fetch_certificate is required to verify SNS deliveries")
        return parse_cloudwatch(
            headers,
            body,
            fetch_certificate=fetch_certificate,
            allowed_cert_host_pattern=allowed_cert_host_pattern,
            allow_http_cert_url=allow_http_cert_url,
            expected_topic_arn=expected_topic_arn,
        )
    if source_type == "pagerduty":
        return parse_pagerduty(body)
    if source_type == "opsgenie":
        try:
            return parse_create(body).alert
        except InvalidFields as invalid:  # the webhook URL answers every refusal as INVALID_PAYLOAD
            raise InvalidPayload.from_problems(invalid.details) from None
    raise ValueError(f"unknown integration source type {source_type!r}")
