"""The "webhook.deliver" consumer: one signed POST per attempt, retried on the spec's retry_schedule.

An attempt runs only when the delivery's record agrees: not finished, exactly `attempt - 1`
attempts made, due, and not claimed. The attempt is claimed first (a conditional update that sets
`claimed_until`, checked against the record's version), so a redelivered message, or the same
message handled by two workers, never sends the same attempt twice; a worker that dies mid-send
leaves a claim that expires, and the attempt runs again when SQS redelivers it.

The target URL is checked again right before sending (DNS may have changed since the
subscription was written) and the connection goes to the address that check accepted, never to
a second resolution. Redirects are not followed. After the fifth failure the delivery is
failed, the subscription disabled, and a "webhook.subscription_disabled" message asks for the
owner's email (its consumer, `notify_owner`, retries through SQS when SES fails).
"""

from __future__ import annotations

import functools
import http.client
import logging
import socket
import ssl
from datetime import datetime, timedelta
from typing import Any, Literal
from urllib.parse import urlsplit

from pynamodb.exceptions import DoesNotExist

from chalicelib import clock
from chalicelib.errors import ValidationFailed
from chalicelib.integration.signing import signed_headers
from chalicelib.notification.webhook_notice import DisabledSubscription, send_disabled_notice
from chalicelib.outbound import retry_schedule, subscriptions, targets
from chalicelib.outbound.fanout import deliver_message
from chalicelib.outbound.retry_schedule import AttemptResult
from chalicelib.outbound.tables import WebhookDeliveryRecord, WebhookSubscriptionRecord
from chalicelib.queue.messages import Message, publish
from chalicelib.settings import get_settings
from chalicelib.store import ConditionFailed, conditional, update_if

logger = logging.getLogger("tocsin.outbound")
SUBSCRIPTION_DISABLED = "webhook.subscription_disabled"
USER_AGENT = "Tocsin-Webhooks/1.0"
# Longer than a send takes (10 s to connect, 10 s per read), shorter than the queue's visibility
# timeout (60 s locally, 360 s on AWS), so a crashed attempt's redelivery finds the claim expired.
CLAIM_SECONDS = 45
UNFINISHED = ("pending", "retrying")
Outcome = Literal["sent", "not_due", "already_done", "claimed", "stale", "gone", "not_sent"]


def handle(message: Message) -> None:
    payload = message.payload
    deliver(
        organization_id=message.organization_id,
        subscription_id=str(payload["subscription_id"]),
        delivery_key=str(payload["delivery_key"]),
        attempt=int(payload["attempt"]),
        now=clock.now(),
    )


def deliver(
    *,
    organization_id: str,
    subscription_id: str,
    delivery_key: str,
    attempt: int,
    now: datetime,
) -> Outcome:
    """Run attempt `attempt` if it is due and unclaimed; returns what happened (logs and tests)."""
    claimed = _claim_at_once(organization_id, subscription_id, delivery_key, attempt, now)
    if claimed is not None:
        return _send(claimed, attempt, now)
    record = _get_delivery(subscription_id, delivery_key)
    if record is None or record.organization_id != organization_id:
        return "gone"
    made = int(record.attempts or 0)
    if made >= attempt or record.status not in UNFINISHED:
        _after_redelivery(record, attempt, now)
        return "already_done"
    if made != attempt - 1:
        logger.warning("out-of-order delivery attempt dropped", extra={"delivery_key": delivery_key})
        return "stale"
    if not retry_schedule.is_due(record.next_attempt_at, now):
        waiting_for = record.next_attempt_at or now
        publish(
            deliver_message(organization_id, subscription_id, delivery_key, attempt),
            delay_seconds=retry_schedule.sqs_delay(waiting_for, now),
        )
        return "not_due"
    subscription = _get_subscription(organization_id, subscription_id)
    if subscription is None or not subscription.enabled:
        reason = "the subscription was deleted" if subscription is None else "the subscription is disabled"
        _stop(record, f"not sent: {reason}", now)
        return "not_sent"
    if not _claim(record, attempt, now):
        return "claimed"
    return _send(record, attempt, now, subscription)


def _send(
    record: WebhookDeliveryRecord,
    attempt: int,
    now: datetime,
    subscription: WebhookSubscriptionRecord | None = None,
) -> Outcome:
    """The claimed attempt: POST, record the outcome, schedule the next attempt or disable."""
    if subscription is None:
        subscription = _get_subscription(record.organization_id, record.subscription_id)
        if subscription is None or not subscription.enabled:
            reason = "the subscription was deleted" if subscription is None else "the subscription is disabled"
            _stop_claimed(record, f"not sent: {reason}", now)
            return "not_sent"
    delivery_key = record.delivery_key
    result = post(subscription.url, record.body.encode(), _headers(subscription, record, attempt))
    status = retry_schedule.status_after(result, attempt)
    next_due = retry_schedule.next_attempt_at(attempt, now) if status == "retrying" else None
    _record(record, attempt, result, status, next_due, now)
    if not result.succeeded:
        logger.info(
            "webhook attempt failed",
            extra={
                "delivery_key": delivery_key,
                "attempt": attempt,
                "error": result.error,
                "retryable": result.retryable,
            },
        )
    if next_due is not None:
        _schedule(record, attempt + 1, next_due)
    elif status == "failed":
        _disable(record, now)
    return "sent"


def _get_delivery(subscription_id: str, delivery_key: str) -> WebhookDeliveryRecord | None:
    try:
        return WebhookDeliveryRecord.get(subscription_id, delivery_key, consistent_read=True)
    except DoesNotExist:
        return None


def _get_subscription(organization_id: str, subscription_id: str) -> WebhookSubscriptionRecord | None:
    try:
        return WebhookSubscriptionRecord.get(organization_id, subscription_id, consistent_read=True)
    except DoesNotExist:
        return None


def _claim_at_once(
    organization_id: str, subscription_id: str, delivery_key: str, attempt: int, now: datetime
) -> WebhookDeliveryRecord | None:
    """The usual case in one request: claim the attempt without reading the record first, on
    condition that it is this organization's, unfinished, at exactly `attempt - 1` attempts, due
    and unclaimed, and get the record back. None when any of that does not hold (or it is gone):
    the caller then reads the record and finds out which (`_claim` below)."""
    d = WebhookDeliveryRecord
    condition = (
        (d.organization_id == organization_id)
        & (d.attempts == attempt - 1)
        & d.status.is_in(*UNFINISHED)
        & (d.next_attempt_at.does_not_exist() | (d.next_attempt_at <= now))
        & (d.claimed_until.does_not_exist() | (d.claimed_until <= now))
    )
    try:
        with conditional():
            answer = d._get_connection().update_item(
                subscription_id,
                delivery_key,
                actions=[d.claimed_until.set(now + timedelta(seconds=CLAIM_SECONDS)), d.version.add(1)],
                condition=condition,
                return_values="ALL_NEW",
            )
    except ConditionFailed:
        return None
    return WebhookDeliveryRecord.from_raw_data(answer["Attributes"])


def _stop_claimed(record: WebhookDeliveryRecord, reason: str, now: datetime) -> None:
    """`_stop` for a record this worker claimed: finish it and release the claim."""
    d = WebhookDeliveryRecord
    update_if(
        record,
        [
            d.status.set("failed"),
            d.last_error.set(reason),
            d.next_attempt_at.remove(),
            d.claimed_until.remove(),
            d.updated_at.set(now),
        ],
        d.status.is_in(*UNFINISHED),
    )


def _claim(record: WebhookDeliveryRecord, attempt: int, now: datetime) -> bool:
    """Take the attempt: True for exactly one of any number of concurrent callers."""
    if record.claimed_until is not None and record.claimed_until > now:
        return False
    # The record's version is checked too: whoever wrote since our read wins.
    return update_if(
        record,
        [WebhookDeliveryRecord.claimed_until.set(now + timedelta(seconds=CLAIM_SECONDS))],
        (WebhookDeliveryRecord.attempts == attempt - 1) & WebhookDeliveryRecord.status.is_in(*UNFINISHED),
    )


def _headers(subscription: WebhookSubscriptionRecord, record: WebhookDeliveryRecord, attempt: int) -> dict[str, str]:
    timestamp = int(clock.now().timestamp())
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        **signed_headers(subscriptions.get_secret(subscription), timestamp, record.body.encode()),
        "X-Tocsin-Event-Id": record.event_id,
        "X-Tocsin-Event-Type": record.event_type,
        "X-Tocsin-Delivery-Attempt": str(attempt),
    }


def _set_or_remove(attribute: Any, value: Any) -> Any:
    return attribute.remove() if value is None else attribute.set(value)


def _record(
    record: WebhookDeliveryRecord,
    attempt: int,
    result: AttemptResult,
    status: str,
    due: datetime | None,
    now: datetime,
) -> None:
    """Write the attempt's outcome and release the claim (conditional on the version we claimed)."""
    d = WebhookDeliveryRecord
    record.update(
        actions=[
            d.attempts.set(attempt),
            d.status.set(status),
            d.last_attempt_at.set(now),
            _set_or_remove(d.next_attempt_at, due),
            _set_or_remove(d.last_error, result.error),
            _set_or_remove(d.response_code, result.response_code),
            d.claimed_until.remove(),
            d.updated_at.set(clock.now()),
        ]
    )


def _stop(record: WebhookDeliveryRecord, reason: str, now: datetime) -> None:
    """Finish a delivery that will not be sent (its subscription is gone or disabled)."""
    d = WebhookDeliveryRecord
    # False when it finished (or was stopped) in the meantime: nothing left to stop.
    update_if(
        record,
        [d.status.set("failed"), d.last_error.set(reason), d.next_attempt_at.remove(), d.updated_at.set(now)],
        d.status.is_in(*UNFINISHED),
    )


def _schedule(record: WebhookDeliveryRecord, attempt: int, due: datetime) -> None:
    """The next attempt's message, delayed (at most 900 s; an early arrival re-enqueues itself)."""
    message = deliver_message(record.organization_id, record.subscription_id, record.delivery_key, attempt)
    publish(message, delay_seconds=retry_schedule.sqs_delay(due, clock.now()))


def _disable(record: WebhookDeliveryRecord, now: datetime) -> None:
    disabled = subscriptions.disable_for_failures(record.organization_id, record.subscription_id, now)
    if disabled is None:
        return  # already disabled (by hand or another delivery) or deleted: its owner heard then
    payload = {"subscription_id": record.subscription_id, "delivery_key": record.delivery_key}
    publish(Message(SUBSCRIPTION_DISABLED, record.organization_id, payload))


def _after_redelivery(record: WebhookDeliveryRecord, attempt: int, now: datetime) -> None:
    """A message for an attempt already recorded. Its first run may have stopped after recording
    and before scheduling what follows (the publish or the disable failed, so SQS redelivered):
    finish that part again. The claim makes an extra next-attempt message harmless."""
    if int(record.attempts or 0) != attempt or record.last_attempt_at is None:
        return
    if record.status == "retrying" and record.next_attempt_at is not None:
        _schedule(record, attempt + 1, record.next_attempt_at)
    elif record.status == "failed" and attempt >= retry_schedule.MAX_ATTEMPTS:
        subscription = _get_subscription(record.organization_id, record.subscription_id)
        # Enabled and not touched since the last attempt: the disable did not happen. Touched
        # since (re-enabled by hand): leave it enabled.
        touched = (
            subscription is not None and (subscription.updated_at or subscription.created_at) > record.last_attempt_at
        )
        if subscription is not None and subscription.enabled and not touched:
            _disable(record, now)


# ---------------------------------------------------------------- sending


def post(url: str, body: bytes, headers: dict[str, str]) -> AttemptResult:
    return post_checked(url, body, headers, allow_local=_local_targets_allowed())


def _local_targets_allowed() -> bool:
    settings = get_settings()
    return settings.is_local and settings.local_allow_http_webhooks


def post_checked(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    allow_local: bool,
    resolve: targets.Resolver = targets.default_resolve,
    timeout: float = retry_schedule.REQUEST_TIMEOUT_SECONDS,
) -> AttemptResult:
    """Check the target, then POST to the very address the check accepted."""
    accepted: list[str] = []

    def resolve_once(host: str, port: int) -> list[str]:
        accepted[:] = resolve(host, port)
        return list(accepted)

    try:
        targets.validate_target_url(url, allow_local=allow_local, resolve=resolve_once)
    except ValidationFailed as error:
        return retry_schedule.from_error("target", error.message)
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    address = accepted[0] if accepted else host  # an IP literal, or the local stage: as written
    connection = _connection(parts.scheme.lower(), host, port, address, timeout)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        response.read(65536)  # drain a little so the receiver sees a clean close; the rest is ignored
        return retry_schedule.from_response(response.status, response.reason or "")
    except TimeoutError:
        return retry_schedule.from_error("timeout", "")
    except (OSError, http.client.HTTPException) as error:
        return retry_schedule.from_error("connection", f"{type(error).__name__}: {error}"[:300])
    finally:
        connection.close()


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The system's trust store and hostname checking; built once (loading the CAs takes a while)."""
    return ssl.create_default_context()


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """TLS to `address`, with the certificate checked for the URL's host name (SNI too)."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        self._tls = _tls_context()
        super().__init__(host, port, timeout=timeout, context=self._tls)
        self._address = address

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(raw, server_hostname=self.host)


def _connection(scheme: str, host: str, port: int, address: str, timeout: float) -> http.client.HTTPConnection:
    if scheme == "https":
        return _PinnedHTTPSConnection(host, port, address, timeout)
    return _PinnedHTTPConnection(host, port, address, timeout)


# ---------------------------------------------------------------- the owner's notice


def notify_owner(message: Message) -> None:
    """Email the owner of a subscription failed deliveries disabled; SES failing raises (SQS retries)."""

    subscription = _get_subscription(message.organization_id, str(message.payload["subscription_id"]))
    if subscription is None or subscription.enabled or not subscription.owner_email:
        return  # deleted, re-enabled already, or nobody to tell
    delivery = _get_delivery(subscription.subscription_id, str(message.payload["delivery_key"]))
    notice = DisabledSubscription(
        subscription_id=subscription.subscription_id,
        url=subscription.url,
        description=subscription.description,
        attempts=int(delivery.attempts or 0) if delivery else retry_schedule.MAX_ATTEMPTS,
        last_error=delivery.last_error if delivery else None,
        disabled_at=subscription.disabled_at or clock.now(),
    )
    result = send_disabled_notice(subscription.owner_email, notice)
    if not result.sent:
        raise RuntimeError(f"the disabled-subscription notice was not sent: {result.error_code}")
