"""Integrations of an organization: create (routing key shown once), list, regenerate, revoke."""

from __future__ import annotations

import ipaddress
import uuid
from dataclasses import dataclass
from datetime import datetime
from types import EllipsisType

from pynamodb.expressions.update import Action

from chalicelib import secrets_box
from chalicelib.catalog.service import find_service
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.integration import routing_keys
from chalicelib.integration.tables import IntegrationRecord
from chalicelib.settings import Settings
from chalicelib.store import (
    RetryableConflict,
    Transaction,
    TransactionCancelled,
    assign,
    retry_on_conflict,
    update_if,
)

INTEGRATION_TYPES = ("custom", "newrelic", "sentry", "alertmanager", "cloudwatch", "pagerduty", "opsgenie")
MAX_ALLOWLIST_ENTRIES = 50
# A revoke re-reads after a lost race (the organization index may lag right after a regenerate).
REVOKE_ATTEMPTS = 5


@dataclass(frozen=True)
class Integration:
    integration_id: str
    organization_id: str
    integration_type: str
    name: str
    state: str
    default_service_key: str | None
    has_signing_secret: bool
    has_client_secret: bool
    ip_allowlist: list[str]
    expected_topic_arn: str | None
    key_hint: str
    created_at: datetime
    revoked_at: datetime | None


@dataclass(frozen=True)
class IssuedIntegration:
    """What creation and regeneration show exactly once."""

    integration: Integration
    routing_key: str
    url: str
    signing_secret: str | None = None
    client_secret: str | None = None


def to_domain(record: IntegrationRecord) -> Integration:
    return Integration(
        integration_id=record.integration_id,
        organization_id=record.organization_id,
        integration_type=record.integration_type,
        name=record.name,
        state=record.state,
        default_service_key=record.default_service_key,
        has_signing_secret=record.signing_secret_sealed is not None,
        has_client_secret=record.client_secret_sealed is not None,
        ip_allowlist=[str(entry) for entry in record.ip_allowlist or []],
        expected_topic_arn=record.expected_topic_arn,
        key_hint=record.key_hint,
        created_at=record.created_at,
        revoked_at=record.revoked_at,
    )


def webhook_url(routing_key: str, *, settings: Settings) -> str:
    return f"{settings.public_base_url.rstrip('/')}/webhooks/{routing_key}"


def normalize_allowlist(entries: list[str]) -> list[str]:
    """Single IPs and CIDR ranges, IPv4 and IPv6; each entry checked, duplicates dropped."""
    if len(entries) > MAX_ALLOWLIST_ENTRIES:
        raise ValidationFailed.for_field("ip_allowlist", f"at most {MAX_ALLOWLIST_ENTRIES} entries")
    normalized: list[str] = []
    problems = []
    for position, entry in enumerate(entries):
        try:
            network = str(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            problems.append({"field": f"ip_allowlist.{position}", "message": f"not an IP address or CIDR: {entry}"})
            continue
        if network not in normalized:
            normalized.append(network)
    if problems:
        raise ValidationFailed.for_fields(problems)
    return normalized


def _seal(secret: str | None, integration_id: str, kind: str, *, settings: Settings) -> str | None:
    return secrets_box.seal(secret, context=f"{integration_id}:{kind}", settings=settings) if secret else None


def reveal_signing_secret(record: IntegrationRecord, *, settings: Settings) -> str | None:
    if record.signing_secret_sealed is None:
        return None
    return secrets_box.unseal(
        record.signing_secret_sealed, context=f"{record.integration_id}:signing", settings=settings
    )


def reveal_client_secret(record: IntegrationRecord, *, settings: Settings) -> str | None:
    if record.client_secret_sealed is None:
        return None
    return secrets_box.unseal(record.client_secret_sealed, context=f"{record.integration_id}:client", settings=settings)


def create_integration(
    *,
    organization_id: str,
    integration_type: str,
    name: str,
    now: datetime,
    default_service_key: str | None = None,
    signing: bool = False,
    client_secret: str | None = None,
    ip_allowlist: list[str] | None = None,
    expected_topic_arn: str | None = None,
    created_by: str | None = None,
    routing_key: str | None = None,
    signing_secret: str | None = None,
    settings: Settings,
) -> IssuedIntegration:
    if integration_type not in INTEGRATION_TYPES:
        raise ValidationFailed.for_field("type", f"must be one of {', '.join(INTEGRATION_TYPES)}")
    if signing and integration_type != "custom":
        raise ValidationFailed.for_field("signing", "signing secrets apply to custom webhooks")
    if client_secret and integration_type != "sentry":
        raise ValidationFailed.for_field("client_secret", "client secrets apply to Sentry integrations")
    if default_service_key is not None:
        # Named by its key or its id (SER-nnnnn); the integration keeps the key.
        found = find_service(organization_id=organization_id, service_ref=default_service_key)
        if found is None:
            raise ValidationFailed.for_field("default_service", "not a service of this organization")
        default_service_key = found.service_key
    integration_id = str(uuid.uuid4())
    key = routing_key or routing_keys.generate_routing_key()
    secret = (signing_secret or routing_keys.generate_secret()) if signing else None
    record = IntegrationRecord(
        routing_keys.hash_routing_key(settings.api_key_hmac_secret, key),
        integration_id=integration_id,
        organization_id=organization_id,
        integration_type=integration_type,
        name=name,
        state="active",
        default_service_key=default_service_key,
        signing_secret_sealed=_seal(secret, integration_id, "signing", settings=settings),
        client_secret_sealed=_seal(client_secret, integration_id, "client", settings=settings),
        ip_allowlist=normalize_allowlist(ip_allowlist or []),
        expected_topic_arn=expected_topic_arn,
        key_hint=key[:6],
        created_at=now,
        created_by=created_by,
    )
    record.save(condition=IntegrationRecord.routing_key_hash.does_not_exist())
    return IssuedIntegration(to_domain(record), key, webhook_url(key, settings=settings), secret, client_secret)


def _active_record(organization_id: str, integration_id: str) -> IntegrationRecord:
    candidates = list(
        IntegrationRecord.by_organization.query(organization_id, IntegrationRecord.integration_id == integration_id)
    )
    for record in candidates:
        if record.state != "superseded":
            return record
    raise NotFound("Integration not found.")


def get_integration(*, organization_id: str, integration_id: str) -> Integration:
    return to_domain(_active_record(organization_id, integration_id))


def update_integration(
    *,
    organization_id: str,
    integration_id: str,
    name: str | EllipsisType = ...,
    default_service: str | EllipsisType | None = ...,
    ip_allowlist: list[str] | EllipsisType = ...,
    expected_topic_arn: str | EllipsisType | None = ...,
) -> Integration:
    """Change what an active integration is called and how it routes and admits alerts; its URL,
    type and secrets stay (a new URL is regenerate's; a revoked integration is final: 409)."""
    actions: list[Action] = []
    if name is not ...:
        actions.append(IntegrationRecord.name.set(name))
    if default_service is not ...:
        service_key = None
        if default_service is not None:
            found = find_service(organization_id=organization_id, service_ref=default_service)
            if found is None:
                raise ValidationFailed.for_field("default_service", "not a service of this organization")
            service_key = found.service_key
        actions.append(assign(IntegrationRecord.default_service_key, service_key))
    if ip_allowlist is not ...:
        actions.append(assign(IntegrationRecord.ip_allowlist, normalize_allowlist(ip_allowlist)))
    if expected_topic_arn is not ...:
        actions.append(assign(IntegrationRecord.expected_topic_arn, expected_topic_arn))

    def attempt() -> Integration:
        record = _active_record(organization_id, integration_id)
        if record.state == "revoked":
            raise Conflict("A revoked integration cannot change; create a new integration.")
        # A regenerate in between supersedes this item: read again and change the new one.
        if update_if(record, actions, IntegrationRecord.state == "active"):
            return to_domain(record)
        raise RetryableConflict()

    return retry_on_conflict(
        attempt, what="integration", attempts=REVOKE_ATTEMPTS, message="The integration is changing right now; retry."
    )


def current_record(*, organization_id: str, integration_id: str) -> IntegrationRecord:
    """The integration's current item (its routing key's, active or revoked); 404 when it has none."""
    return _active_record(organization_id, integration_id)


def list_integrations(*, organization_id: str) -> list[Integration]:
    found = [
        to_domain(record)
        for record in IntegrationRecord.by_organization.query(organization_id)
        if record.state != "superseded"
    ]
    return sorted(found, key=lambda i: i.created_at, reverse=True)


def regenerate_url(
    *, organization_id: str, integration_id: str, now: datetime, settings: Settings
) -> IssuedIntegration:
    """A new routing key; the old one stops answering at once (ROUTE_NOT_FOUND)."""
    current = _active_record(organization_id, integration_id)
    if current.state == "revoked":
        raise Conflict("A revoked integration cannot get a new URL; create a new integration.")
    key = routing_keys.generate_routing_key()
    replacement = IntegrationRecord(
        routing_keys.hash_routing_key(settings.api_key_hmac_secret, key),
        **{name: getattr(current, name) for name in _COPIED_ATTRIBUTES},
        state="active",
        key_hint=key[:6],
    )
    transaction = Transaction()
    transaction.update(
        "current",
        current,
        [IntegrationRecord.state.set("superseded"), IntegrationRecord.superseded_at.set(now)],
        IntegrationRecord.state == "active",
    )
    transaction.put("replacement", replacement, IntegrationRecord.routing_key_hash.does_not_exist())
    try:
        transaction.commit()
    except TransactionCancelled:
        raise Conflict("The integration changed at the same time; retry.") from None
    return IssuedIntegration(to_domain(replacement), key, webhook_url(key, settings=settings))


_COPIED_ATTRIBUTES = (
    "integration_id",
    "organization_id",
    "integration_type",
    "name",
    "default_service_key",
    "signing_secret_sealed",
    "client_secret_sealed",
    "ip_allowlist",
    "expected_topic_arn",
    "created_at",
    "created_by",
)


def revoke_integration(*, organization_id: str, integration_id: str, now: datetime) -> Integration:
    """From now on its URL answers 410 WEBHOOK_REVOKED. Revoking twice keeps the first time.

    The organization index is eventually consistent: right after a regenerate it may still show
    the superseded item. A failed condition re-reads and tries the current item again.
    """

    def attempt() -> Integration:
        record = _active_record(organization_id, integration_id)
        if record.state != "active":
            return to_domain(record)
        revoke = [IntegrationRecord.state.set("revoked"), IntegrationRecord.revoked_at.set(now)]
        if update_if(record, revoke, IntegrationRecord.state == "active"):
            return to_domain(record)
        record.refresh(consistent_read=True)
        if record.state == "revoked":
            return to_domain(record)
        raise RetryableConflict()

    return retry_on_conflict(
        attempt, what="integration", attempts=REVOKE_ATTEMPTS, message="The integration is changing right now; retry."
    )


def find_by_routing_key(routing_key: str, *, settings: Settings) -> IntegrationRecord | None:
    """One GetItem by the key's hash; malformed keys never reach DynamoDB."""
    if not routing_keys.looks_like_routing_key(routing_key):
        return None
    try:
        return IntegrationRecord.get(
            routing_keys.hash_routing_key(settings.api_key_hmac_secret, routing_key), consistent_read=True
        )
    except IntegrationRecord.DoesNotExist:
        return None
