"""Tocsin's webhooks, as both kinds send them (outbound subscriptions, status-page webhook
followers): the retry schedule they promise and the headers that name the event.

Spec (Events, delivery retry behavior): attempt 1 immediately, then 1 minute, 5 minutes,
30 minutes and 2 hours after the previous attempt; every failure counts, and after the fifth
the receiver is given up on (a subscription disabled, a follower removed: each kind's own hook).
"""

from __future__ import annotations

from chalicelib.delivery.schedule import RetrySchedule

RETRIES = RetrySchedule(delays_seconds=(60, 300, 1800, 7200))
EVENT_ID_HEADER = "X-Tocsin-Event-Id"
EVENT_TYPE_HEADER = "X-Tocsin-Event-Type"
ATTEMPT_HEADER = "X-Tocsin-Delivery-Attempt"


def event_headers(event_id: str, event_type: str, attempt: int) -> dict[str, str]:
    """Sent after the signature headers, on every attempt of a delivery."""
    return {EVENT_ID_HEADER: event_id, EVENT_TYPE_HEADER: event_type, ATTEMPT_HEADER: str(attempt)}
