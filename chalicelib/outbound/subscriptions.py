"""Webhook subscriptions of an organization: create (secret shown once), read, update, delete,
rotate the secret, list deliveries; and what the delivery worker needs (the secret, disabling).

Every write is conditional on the record's version (VersionAttribute): a PATCH naming the
version it read gets a 409 when someone wrote in between; without one the update re-reads and
re-applies, so two racing PATCHes both land and neither is lost. The URL is checked (https,
public addresses after DNS) on every write; the delivery worker checks it again per attempt.
"""

from __future__ import annotations

import base64
import binascii
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import EllipsisType

from pynamodb.exceptions import DoesNotExist

from chalicelib import secrets_box
from chalicelib.delivery import targets
from chalicelib.directory import rules
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.integration.admin import get_integration
from chalicelib.outbound.events import ALL_EVENTS, EVENT_TYPES
from chalicelib.outbound.tables import WebhookDeliveryRecord, WebhookSubscriptionRecord
from chalicelib.settings import Settings
from chalicelib.store import RetryableConflict, delete_if, retry_on_conflict, save_if, update_if

WILDCARD = ALL_EVENTS
SECRET_PREFIX = "whsec_"
MAX_SUBSCRIPTIONS = 50  # per organization: every event is fanned out to each of them
DISABLED_BY_FAILURES = "delivery_failures"
DISABLED_BY_HAND = "manual"
MAX_EVENT_TYPE_ENTRIES = len(EVENT_TYPES) + 1
_SUBSCRIPTION_ID = re.compile(r"^whs_[0-9a-f]{32}$")


@dataclass(frozen=True)
class CreatedSubscription:
    """A subscription and its signing secret: shown at creation and rotation, never again."""

    record: WebhookSubscriptionRecord
    secret: str


@dataclass(frozen=True)
class DeliveryPage:
    items: list[WebhookDeliveryRecord]
    next_cursor: str | None


def new_subscription_id() -> str:
    return f"whs_{secrets.token_hex(16)}"


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


# --- pure rules ------------------------------------------------------------------------------------


def normalize_event_types(values: Sequence[str]) -> list[str]:
    """Known event type names without duplicates (in EVENT_TYPES order), or ["*"] alone for all."""
    if not values:
        raise ValidationFailed.for_field("event_types", 'must name at least one event type, or "*" for all')
    if len(values) > MAX_EVENT_TYPE_ENTRIES:
        raise ValidationFailed.for_field("event_types", f"must have at most {MAX_EVENT_TYPE_ENTRIES} entries")
    problems = [
        {"field": f"event_types.{index}", "message": f'unknown event type; one of {", ".join(EVENT_TYPES)} or "*"'}
        for index, value in enumerate(values)
        if value != WILDCARD and value not in EVENT_TYPES
    ]
    if problems:
        raise ValidationFailed.for_fields(problems, "The subscription names unknown event types.")
    if WILDCARD in values:
        if len(set(values)) > 1:
            raise ValidationFailed.for_field("event_types", '"*" (every event type) must be the only entry')
        return [WILDCARD]
    return [name for name in EVENT_TYPES if name in values]


def event_types_of(record: WebhookSubscriptionRecord) -> list[str]:
    stored = set(record.event_types or ())
    return [WILDCARD] if WILDCARD in stored else [name for name in EVENT_TYPES if name in stored]


def encode_cursor(delivery_key: str) -> str:
    return base64.urlsafe_b64encode(delivery_key.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    try:
        key = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        key = ""
    if "#" not in key:
        raise ValidationFailed.for_field("cursor", "not a cursor from a previous page of this listing")
    return key


# --- checks that read ------------------------------------------------------------------------------


def check_url(url: str, *, settings: Settings) -> str:
    # The resolver is looked up per call, so tests can replace targets.default_resolve.
    targets.validate_target_url(
        url,
        allow_local=targets.local_targets_allowed(settings=settings),
        resolve=targets.default_resolve,
        settings=settings,
    )
    return url


def check_sync_integration(organization_id: str, integration_id: str | None) -> None:
    if integration_id is None:
        return

    try:
        integration = get_integration(organization_id=organization_id, integration_id=integration_id)
    except NotFound:
        raise ValidationFailed.for_field("sync_integration_id", "not an integration of this organization") from None
    if integration.state != "active":
        raise ValidationFailed.for_field("sync_integration_id", "the integration is revoked")


def _owner(email: str | None) -> str | None:
    return rules.normalize_email(email, field="owner_email") if email is not None else None


# --- reads -----------------------------------------------------------------------------------------


def _not_found() -> NotFound:
    return NotFound("Webhook subscription not found.")


def _get_record(organization_id: str, subscription_id: str, *, consistent: bool = False) -> WebhookSubscriptionRecord:
    if not _SUBSCRIPTION_ID.match(subscription_id):
        raise _not_found()
    try:
        return WebhookSubscriptionRecord.get(organization_id, subscription_id, consistent_read=consistent)
    except DoesNotExist:
        raise _not_found() from None


def get_subscription(*, organization_id: str, subscription_id: str) -> WebhookSubscriptionRecord:
    return _get_record(organization_id, subscription_id)


def list_subscriptions(*, organization_id: str) -> list[WebhookSubscriptionRecord]:
    """Newest first; one Query on the organization's partition."""
    found = list(WebhookSubscriptionRecord.query(organization_id))
    return sorted(found, key=lambda r: (r.created_at, r.subscription_id), reverse=True)


def get_secret(record: WebhookSubscriptionRecord, *, settings: Settings) -> str:
    return secrets_box.unseal(record.sealed_secret, context=record.subscription_id, settings=settings)


def list_deliveries(
    *, organization_id: str, subscription_id: str, now: datetime, limit: int = 20, cursor: str | None = None
) -> DeliveryPage:
    """Newest first, `limit` per page; expired deliveries (TTL not yet applied) are left out."""
    start = decode_cursor(cursor) if cursor else None
    _get_record(organization_id, subscription_id)
    found = list(
        WebhookDeliveryRecord.query(
            subscription_id,
            filter_condition=WebhookDeliveryRecord.expires_at > now,
            scan_index_forward=False,
            limit=limit + 1,  # one more than the page says whether there is a next page
            last_evaluated_key=(
                {"subscription_id": {"S": subscription_id}, "delivery_key": {"S": start}} if start else None
            ),
        )
    )
    page = found[:limit]
    more = len(found) > limit
    return DeliveryPage(page, encode_cursor(page[-1].delivery_key) if more and page else None)


# --- writes ----------------------------------------------------------------------------------------


def create_subscription(
    *,
    organization_id: str,
    url: str,
    event_types: list[str],
    now: datetime,
    description: str | None = None,
    owner_email: str | None = None,
    sync_integration_id: str | None = None,
    enabled: bool = True,
    created_by: str | None = None,
    settings: Settings,
) -> CreatedSubscription:
    names = normalize_event_types(event_types)
    cleaned_description = rules.clean_description(description)
    owner = _owner(owner_email)
    check_url(url, settings=settings)
    check_sync_integration(organization_id, sync_integration_id)
    if WebhookSubscriptionRecord.count(organization_id) >= MAX_SUBSCRIPTIONS:
        raise Conflict(
            f"The organization has {MAX_SUBSCRIPTIONS} webhook subscriptions, the most it may have; "
            "delete one or widen the event types of another."
        )
    subscription_id = new_subscription_id()
    secret = new_secret()
    record = WebhookSubscriptionRecord(
        organization_id,
        subscription_id,
        url=url,
        event_types=set(names),
        description=cleaned_description,
        enabled=enabled,
        disabled_reason=None if enabled else DISABLED_BY_HAND,
        disabled_at=None if enabled else now,
        sync_integration_id=sync_integration_id,
        owner_email=owner,
        sealed_secret=secrets_box.seal(secret, context=subscription_id, settings=settings),
        created_by=created_by,
        created_at=now,
    )
    record.save(condition=WebhookSubscriptionRecord.subscription_id.does_not_exist())
    return CreatedSubscription(record, secret)


def _stale(expected: int, current: int) -> Conflict:
    return Conflict(
        f"The webhook subscription changed since version {expected}; it is now at version {current}. "
        "Read it again and reapply your change.",
        details={"expected_version": expected, "current_version": current},
    )


def _write(
    organization_id: str,
    subscription_id: str,
    change: Callable[[WebhookSubscriptionRecord], None],
    *,
    expected_version: int | None = None,
) -> WebhookSubscriptionRecord:
    """Read, apply `change`, save on the version read; re-run when another writer got there first."""

    def attempt() -> WebhookSubscriptionRecord:
        record = _get_record(organization_id, subscription_id, consistent=True)
        if expected_version is not None and record.version != expected_version:
            raise _stale(expected_version, int(record.version or 0))
        change(record)
        # The version condition is added by PynamoDB; exists() keeps a deleted one deleted.
        if not save_if(record, WebhookSubscriptionRecord.subscription_id.exists()):
            if expected_version is not None:
                latest = _get_record(organization_id, subscription_id, consistent=True)
                raise _stale(expected_version, int(latest.version or 0))
            raise RetryableConflict()
        return record

    return retry_on_conflict(attempt, what="webhook subscription")


def _set_enabled(record: WebhookSubscriptionRecord, enabled: bool, now: datetime) -> None:
    if enabled:
        record.enabled, record.disabled_reason, record.disabled_at = True, None, None
    elif record.enabled:
        record.enabled, record.disabled_reason, record.disabled_at = False, DISABLED_BY_HAND, now


def update_subscription(
    *,
    organization_id: str,
    subscription_id: str,
    now: datetime,
    expected_version: int | None = None,
    url: str | EllipsisType = ...,
    event_types: list[str] | EllipsisType = ...,
    description: str | EllipsisType | None = ...,
    enabled: bool | EllipsisType = ...,
    owner_email: str | EllipsisType | None = ...,
    sync_integration_id: str | EllipsisType | None = ...,
    settings: Settings,
) -> WebhookSubscriptionRecord:
    """Change only the arguments given (`...` means unchanged). enabled=True re-enables a disabled
    subscription and clears why and when it was disabled; enabled=False disables it by hand."""
    names = normalize_event_types(event_types) if event_types is not ... else None
    cleaned_description = rules.clean_description(description) if description is not ... else None
    owner = _owner(owner_email) if owner_email is not ... else None
    _get_record(organization_id, subscription_id)  # 404 before any (slower) URL or integration check
    if url is not ...:
        check_url(url, settings=settings)
    if sync_integration_id is not ...:
        check_sync_integration(organization_id, sync_integration_id)

    def change(record: WebhookSubscriptionRecord) -> None:
        if url is not ...:
            record.url = url
        if names is not None:
            record.event_types = set(names)
        if description is not ...:
            record.description = cleaned_description
        if owner_email is not ...:
            record.owner_email = owner
        if sync_integration_id is not ...:
            record.sync_integration_id = sync_integration_id
        if enabled is not ...:
            _set_enabled(record, enabled, now)
        record.updated_at = now

    return _write(organization_id, subscription_id, change, expected_version=expected_version)


def rotate_secret(
    *, organization_id: str, subscription_id: str, now: datetime, settings: Settings
) -> CreatedSubscription:
    """A new signing secret, in force from the next attempt on; the old one stops at once."""
    secret = new_secret()

    def change(record: WebhookSubscriptionRecord) -> None:
        record.sealed_secret = secrets_box.seal(secret, context=record.subscription_id, settings=settings)
        record.updated_at = now

    return CreatedSubscription(_write(organization_id, subscription_id, change), secret)


def delete_subscription(*, organization_id: str, subscription_id: str) -> None:
    """404 when unknown. Its deliveries stay listed nowhere and expire with their TTL; queued
    attempts find the subscription gone and stop."""
    record = _get_record(organization_id, subscription_id)
    if not delete_if(record, WebhookSubscriptionRecord.subscription_id.exists(), add_version_condition=False):
        raise _not_found()


def disable_for_failures(organization_id: str, subscription_id: str, now: datetime) -> WebhookSubscriptionRecord | None:
    """Disable after the last failed attempt. The record when this call disabled it (so its owner
    is notified once), None when it is gone or already disabled (by hand or by another attempt)."""

    def attempt() -> WebhookSubscriptionRecord | None:
        try:
            record = _get_record(organization_id, subscription_id, consistent=True)
        except NotFound:
            return None
        if not record.enabled:
            return None
        disabled = update_if(
            record,
            [
                WebhookSubscriptionRecord.enabled.set(False),
                WebhookSubscriptionRecord.disabled_reason.set(DISABLED_BY_FAILURES),
                WebhookSubscriptionRecord.disabled_at.set(now),
                WebhookSubscriptionRecord.updated_at.set(now),
            ],
            WebhookSubscriptionRecord.enabled == True,  # noqa: E712 (a DynamoDB condition)
        )
        if not disabled:
            raise RetryableConflict()  # changed in between: read again
        return record

    return retry_on_conflict(
        attempt,
        what="webhook subscription",
        message="The webhook subscription was changed concurrently too many times.",
    )
