"""The checks every inbound delivery passes, in the order the contract gives: route exists, not
revoked, HTTPS, IP allow-list, rate limit, body size. Signatures and payloads come after."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from datetime import datetime

from chalicelib.errors import RateLimited
from chalicelib.integration.admin import find_by_routing_key
from chalicelib.integration.tables import IntegrationRecord
from chalicelib.ratelimit.window import RateLimitDecision
from chalicelib.settings import get_settings

MAX_BODY_BYTES = 256 * 1024

STATUS_OF = {
    "ROUTE_NOT_FOUND": 404,
    "WEBHOOK_REVOKED": 410,
    "INVALID_PAYLOAD": 400,
    "INVALID_SIGNATURE": 401,
    "SIGNATURE_EXPIRED": 401,
    "IP_NOT_ALLOWED": 403,
    "HTTPS_REQUIRED": 403,
    "PAYLOAD_TOO_LARGE": 413,
    "RATE_LIMITED": 429,
    "INTERNAL_ERROR": 500,
}


@dataclass
class WebhookError(Exception):
    code: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    details: list[str] = field(default_factory=list)

    @property
    def status(self) -> int:
        return STATUS_OF.get(self.code, 400)


@dataclass(frozen=True)
class Admitted:
    integration: IntegrationRecord
    rate: RateLimitDecision


def admit(*, routing_key: str, forwarded_proto: str | None, source_ip: str, body_size: int, now: datetime) -> Admitted:
    from chalicelib.api import ratelimits

    integration = find_by_routing_key(routing_key)
    if integration is None or integration.state == "superseded":
        raise WebhookError("ROUTE_NOT_FOUND", "No integration has this routing key (invalid or expired).")
    if integration.state == "revoked":
        raise WebhookError("WEBHOOK_REVOKED", "This webhook has been revoked.")
    if not _scheme_allowed(forwarded_proto):
        raise WebhookError("HTTPS_REQUIRED", "Webhook URLs work over HTTPS only.")
    if integration.ip_allowlist and not ip_allowed(source_ip, [str(n) for n in integration.ip_allowlist]):
        raise WebhookError("IP_NOT_ALLOWED", f"Deliveries from {source_ip} are not allowed for this webhook.")
    try:
        decision = ratelimits.charge(category="webhook", identity=integration.integration_id, now=now)
    except RateLimited as limited:
        raise WebhookError(
            "RATE_LIMITED", "More than the allowed webhook deliveries per minute; retry later.", limited.headers
        ) from None
    if body_size > MAX_BODY_BYTES:
        raise WebhookError(
            "PAYLOAD_TOO_LARGE", f"The body is larger than {MAX_BODY_BYTES // 1024} KiB.", decision.headers()
        )
    return Admitted(integration, decision)


def _scheme_allowed(forwarded_proto: str | None) -> bool:
    # API Gateway always sets X-Forwarded-Proto; anything but https is plain HTTP.
    if (forwarded_proto or "").split(",")[0].strip().lower() == "https":
        return True
    settings = get_settings()
    return settings.is_local and settings.local_allow_http_webhooks


def ip_allowed(source_ip: str, allowlist: list[str]) -> bool:
    try:
        address = ipaddress.ip_address(source_ip)
    except ValueError:
        return False
    for entry in allowlist:
        network = ipaddress.ip_network(entry, strict=False)
        if address.version == network.version and address in network:
            return True
        # An IPv4 client seen as IPv6-mapped (::ffff:a.b.c.d) matches IPv4 ranges.
        mapped = getattr(address, "ipv4_mapped", None)
        if mapped is not None and network.version == 4 and mapped in network:
            return True
    return False
