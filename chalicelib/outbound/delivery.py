"""The "webhook.deliver" consumer: one attempt of one outbound subscription's delivery.

The attempt runs in the delivery kernel (chalicelib/delivery/attempts.py: claimed once, sent,
recorded, the next attempt scheduled on Tocsin's webhook schedule, chalicelib/delivery/webhook.py);
this module says only what is outbound's own:
- the delivery is the organization's WebhookDeliveryRecord, its body fixed by the fan-out;
- it is for the subscription as it is now: deleted or disabled since, the delivery ends unsent;
- an attempt is the signed POST to the subscription's URL with its secret (chalicelib/delivery/http_post.py);
- giving up, after the fifth failure: the subscription is disabled and a
  "webhook.subscription_disabled" message asks for the owner's email (its consumer,
  `notify_owner`, retries through SQS when SES fails).
"""

from __future__ import annotations

from datetime import datetime

from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.condition import Condition

from chalicelib import clock
from chalicelib.delivery import attempts, http_post, webhook
from chalicelib.delivery.attempts import Outcome, ScheduledDelivery, Unsent
from chalicelib.notification.webhook_notice import DisabledSubscription, send_disabled_notice
from chalicelib.outbound import subscriptions
from chalicelib.outbound.tables import WebhookDeliveryRecord, WebhookSubscriptionRecord
from chalicelib.queue.messages import Message, publish
from chalicelib.settings import Settings

DELIVER = "webhook.deliver"
SUBSCRIPTION_DISABLED = "webhook.subscription_disabled"


def deliver_message(organization_id: str, subscription_id: str, delivery_key: str, attempt: int) -> Message:
    payload = {"subscription_id": subscription_id, "delivery_key": delivery_key, "attempt": attempt}
    return Message(DELIVER, organization_id, payload)


class SubscriptionDelivery(ScheduledDelivery[WebhookDeliveryRecord, WebhookSubscriptionRecord]):
    model = WebhookDeliveryRecord
    schedule = webhook.RETRIES

    def __init__(self, organization_id: str, subscription_id: str, delivery_key: str) -> None:
        self.organization_id = organization_id
        self.subscription_id = subscription_id
        self.delivery_key = delivery_key

    @property
    def key(self) -> tuple[str, str]:
        return self.subscription_id, self.delivery_key

    @property
    def guard(self) -> Condition:
        return WebhookDeliveryRecord.organization_id == self.organization_id

    def owns(self, record: WebhookDeliveryRecord) -> bool:
        return record.organization_id == self.organization_id

    @property
    def where(self) -> dict[str, str]:
        return {"delivery_key": self.delivery_key}

    def message(self, attempt: int) -> Message:
        return deliver_message(self.organization_id, self.subscription_id, self.delivery_key, attempt)

    def recipient(self, record: WebhookDeliveryRecord) -> WebhookSubscriptionRecord | Unsent:
        subscription = _get_subscription(self.organization_id, self.subscription_id)
        if subscription is None:
            return Unsent("the subscription was deleted")
        if not subscription.enabled:
            return Unsent("the subscription is disabled")
        return subscription

    def send(
        self, record: WebhookDeliveryRecord, recipient: WebhookSubscriptionRecord, attempt: int, *, settings: Settings
    ) -> http_post.Answer:
        return http_post.post(
            recipient.url,
            record.body.encode(),
            secret=subscriptions.get_secret(recipient, settings=settings),
            headers=webhook.event_headers(record.event_id, record.event_type, attempt),
            settings=settings,
        )

    def give_up(
        self, record: WebhookDeliveryRecord, now: datetime, recipient: WebhookSubscriptionRecord | None
    ) -> None:
        if recipient is None:  # a redelivery: was the subscription disabled after the last attempt?
            subscription = _get_subscription(self.organization_id, self.subscription_id)
            # Enabled and not touched since the last attempt: the disable did not happen. Touched
            # since (re-enabled by hand): leave it enabled.
            if subscription is None or not subscription.enabled:
                return
            if (subscription.updated_at or subscription.created_at) > (record.last_attempt_at or now):
                return
        disabled = subscriptions.disable_for_failures(self.organization_id, self.subscription_id, now)
        if disabled is None:
            return  # already disabled (by hand or another delivery) or deleted: its owner heard then
        payload = {"subscription_id": self.subscription_id, "delivery_key": self.delivery_key}
        publish(Message(SUBSCRIPTION_DISABLED, self.organization_id, payload))


def handle(message: Message, settings: Settings) -> None:
    payload = message.payload
    delivery = SubscriptionDelivery(
        message.organization_id, str(payload["subscription_id"]), str(payload["delivery_key"])
    )
    attempts.run(delivery, int(payload["attempt"]), clock.now(), settings=settings)


def deliver(
    *, organization_id: str, subscription_id: str, delivery_key: str, attempt: int, now: datetime, settings: Settings
) -> Outcome:
    """Run attempt `attempt` if it is due and unclaimed; returns what happened (logs and tests)."""
    return attempts.run(
        SubscriptionDelivery(organization_id, subscription_id, delivery_key), attempt, now, settings=settings
    )


def _get_subscription(organization_id: str, subscription_id: str) -> WebhookSubscriptionRecord | None:
    try:
        return WebhookSubscriptionRecord.get(organization_id, subscription_id, consistent_read=True)
    except DoesNotExist:
        return None


# ---------------------------------------------------------------- the owner's notice


def notify_owner(message: Message, settings: Settings) -> None:
    """Email the owner of a subscription failed deliveries disabled; SES failing raises (SQS retries)."""

    subscription = _get_subscription(message.organization_id, str(message.payload["subscription_id"]))
    if subscription is None or subscription.enabled or not subscription.owner_email:
        return  # deleted, re-enabled already, or nobody to tell
    delivery_key = str(message.payload["delivery_key"])
    delivery = attempts.read(SubscriptionDelivery(message.organization_id, subscription.subscription_id, delivery_key))
    notice = DisabledSubscription(
        subscription_id=subscription.subscription_id,
        url=subscription.url,
        description=subscription.description,
        attempts=int(delivery.attempts or 0) if delivery else webhook.RETRIES.max_attempts,
        last_error=delivery.last_error if delivery else None,
        disabled_at=subscription.disabled_at or clock.now(),
    )
    result = send_disabled_notice(
        subscription.owner_email, notice, organization_id=message.organization_id, settings=settings
    )
    if result.over_budget:
        return  # the gate logged the refusal; retrying would not make room
    if not result.sent:
        raise RuntimeError(f"the disabled-subscription notice was not sent: {result.error_code}")
