"""The checks every inbound delivery passes, in the order docs/INTEGRATIONS.md ("Signatures and other
checks") gives: the
routing-key credential's authenticator (chalicelib.api.routing_keys calls it; the request pipeline
charges the buckets it names).

1. route: the routing key names an integration (and, on the legacy /v1/incidents path, a custom one);
2. not revoked;
3. HTTPS;
4. IP allow-list;
5. body size (256 KiB);
6. HMAC signature, where the integration has a secret (custom webhook, Sentry). A delivery whose
   signature fails (missing, wrong, or expired) counts against the `webhook_unverified` bucket of
   its routing key and address (`unverified_bucket`), not the routing key's own: forgeries from
   whoever knows the URL cannot spend the budget of the real alerts, and the forger is still rate
   limited. HMAC is cheap, so checking it before any bucket costs nothing;
7. rate limit: the routing key's `webhook` bucket (`delivery_bucket`; verified or unsigned deliveries).
SNS signatures (they may fetch a certificate) and payloads come after, in the route.
Each refusal is an error of chalicelib.errors; the route renders it in its own body shape."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from chalicelib.errors import HttpsRequired, IpNotAllowed, PayloadTooLarge, RouteNotFound, WebhookRevoked
from chalicelib.integration import signing
from chalicelib.integration.admin import find_by_routing_key, reveal_client_secret, reveal_signing_secret
from chalicelib.integration.normalized import get_header
from chalicelib.integration.tables import IntegrationRecord
from chalicelib.ratelimit.buckets import Bucket
from chalicelib.settings import Settings

MAX_BODY_BYTES = 256 * 1024
DELIVERY_BUCKET = "webhook"
UNVERIFIED_BUCKET = "webhook_unverified"


@dataclass(frozen=True)
class Admitted:
    """A delivery past the gate: its integration and, for a signed custom delivery, the verified
    X-Service-Signature (lower-case hex), the key that recognises a replay of the same request
    (chalicelib.integration.replay). `signed`: a signature was checked (custom or Sentry)."""

    integration: IntegrationRecord
    signature: str | None = None
    signed: bool = False


def route(
    *,
    routing_key: str,
    forwarded_proto: str | None,
    source_ip: str,
    body_size: int,
    source_type: str | None = None,
    settings: Settings,
) -> IntegrationRecord:
    """Checks 1-5. `source_type` is the path's ("legacy" for /v1/incidents), else the integration's type."""
    integration = find(routing_key, settings=settings)
    check(
        integration,
        forwarded_proto=forwarded_proto,
        source_ip=source_ip,
        body_size=body_size,
        source_type=source_type,
        settings=settings,
    )
    return integration


def find(routing_key: str, *, settings: Settings) -> IntegrationRecord:
    """Check 1, the lookup: the integration the key names (a superseded key's too: `check` refuses it)."""
    integration = find_by_routing_key(routing_key, settings=settings)
    if integration is None:
        raise _not_found()
    return integration


def check(
    integration: IntegrationRecord,
    *,
    forwarded_proto: str | None,
    source_ip: str,
    body_size: int,
    source_type: str | None = None,
    settings: Settings,
) -> None:
    """Checks 1 (a current key) to 5 on the integration a key named."""
    if integration.state == "superseded":
        raise _not_found()
    if integration.state == "revoked":
        raise WebhookRevoked("This webhook has been revoked.")
    if source_type == "legacy" and integration.integration_type != "custom":
        # The legacy path is the custom webhook's older form: a native integration's key must
        # not skip its own signature checks (Sentry client secret, SNS) by posting here.
        raise RouteNotFound("No custom webhook has this routing key.")
    if not _scheme_allowed(forwarded_proto, settings=settings):
        raise HttpsRequired("Webhook URLs work over HTTPS only.")
    if integration.ip_allowlist and not ip_allowed(source_ip, [str(n) for n in integration.ip_allowlist]):
        raise IpNotAllowed(f"Deliveries from {source_ip} are not allowed for this webhook.")
    if body_size > MAX_BODY_BYTES:
        raise PayloadTooLarge(f"The body is larger than {MAX_BODY_BYTES // 1024} KiB.")


def _not_found() -> RouteNotFound:
    return RouteNotFound("No integration has this routing key (invalid or expired).")


def requires_signature(integration: IntegrationRecord, source_type: str) -> bool:
    """Check 6 applies: the integration has the secret its source type signs with."""
    if source_type in ("custom", "legacy"):
        return integration.signing_secret_sealed is not None
    if source_type == "sentry":
        return integration.client_secret_sealed is not None
    return False


def verify_signature(
    integration: IntegrationRecord,
    source_type: str,
    headers: Mapping[str, str] | None,
    body: bytes,
    now: datetime,
    *,
    settings: Settings,
) -> str | None:
    """Check 6: the HMAC signature the integration calls for (a DeliveryRejected when it fails);
    the custom webhook's verified signature."""
    if source_type in ("custom", "legacy"):
        secret = reveal_signing_secret(integration, settings=settings)
        if secret:
            signing.verify_custom(secret, headers, body, now=now)
            return (get_header(headers, signing.SIGNATURE_HEADER) or "").lower()
    elif source_type == "sentry":
        client_secret = reveal_client_secret(integration, settings=settings)
        if client_secret:
            signing.verify_sentry(client_secret, headers, body)
    return None


def delivery_bucket(integration: IntegrationRecord) -> Bucket:
    """Check 7: where a delivery past the signature counts (per routing key)."""
    return Bucket(
        DELIVERY_BUCKET, integration.integration_id, "More than the allowed webhook deliveries per minute; retry later."
    )


def unverified_bucket(integration: IntegrationRecord, source_ip: str) -> Bucket:
    """Where a delivery whose signature failed counts (per routing key and address)."""
    return Bucket(
        UNVERIFIED_BUCKET,
        f"{integration.integration_id}#{source_ip}",
        "Too many deliveries with a bad signature from this address; retry later.",
    )


def _scheme_allowed(forwarded_proto: str | None, *, settings: Settings) -> bool:
    # API Gateway always sets X-Forwarded-Proto; anything but https is plain HTTP.
    if (forwarded_proto or "").split(",")[0].strip().lower() == "https":
        return True
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
