"""The checks every inbound delivery passes, in the order README ("Inbound webhooks") gives: route exists, not
revoked, HTTPS, IP allow-list, rate limit, body size. Signatures and payloads come after.
Each refusal is an error of chalicelib.errors; the route renders it in its own body shape."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import datetime

from chalicelib.errors import (
    HttpsRequired,
    IpNotAllowed,
    PayloadTooLarge,
    RateLimited,
    RouteNotFound,
    WebhookRevoked,
)
from chalicelib.integration.admin import find_by_routing_key
from chalicelib.integration.tables import IntegrationRecord
from chalicelib.ratelimit import buckets
from chalicelib.ratelimit.window import RateLimitDecision
from chalicelib.settings import get_settings

MAX_BODY_BYTES = 256 * 1024


@dataclass(frozen=True)
class Admitted:
    integration: IntegrationRecord
    rate: RateLimitDecision


def admit(*, routing_key: str, forwarded_proto: str | None, source_ip: str, body_size: int, now: datetime) -> Admitted:
    integration = find_by_routing_key(routing_key)
    if integration is None or integration.state == "superseded":
        raise RouteNotFound("No integration has this routing key (invalid or expired).")
    if integration.state == "revoked":
        raise WebhookRevoked("This webhook has been revoked.")
    if not _scheme_allowed(forwarded_proto):
        raise HttpsRequired("Webhook URLs work over HTTPS only.")
    if integration.ip_allowlist and not ip_allowed(source_ip, [str(n) for n in integration.ip_allowlist]):
        raise IpNotAllowed(f"Deliveries from {source_ip} are not allowed for this webhook.")
    try:
        decision = buckets.charge(category="webhook", identity=integration.integration_id, now=now)
    except RateLimited as limited:
        raise RateLimited(
            "More than the allowed webhook deliveries per minute; retry later.", headers=limited.headers
        ) from None
    if body_size > MAX_BODY_BYTES:
        raise PayloadTooLarge(f"The body is larger than {MAX_BODY_BYTES // 1024} KiB.", headers=decision.headers())
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
