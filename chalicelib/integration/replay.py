"""Replays of a signed custom webhook delivery: the same request (same timestamp, same signature)
sent again inside the signature's replay window opens nothing new.

The signature is an HMAC over the timestamp and the body, so it names the request. Its SHA-256
is claimed with one conditional PutItem (chalicelib.idempotency: an Idempotency-Key the sender
did not have to send), kept as long as the signature could still be accepted. Of N identical
requests exactly one runs; the others get its answer as a dedup: 200, the first incident,
`deduplicated: true` (what PagerDuty answers a repeated event, and what lets a sender that timed
out retry safely, as Stripe's idempotent requests do). One still running when the replay arrives
is a 409 IDEMPOTENCY_IN_PROGRESS; a delivery that failed keeps no claim, so its retry runs again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime, timedelta

from chalicelib.errors import IdempotencyInProgress
from chalicelib.idempotency.service import StoredResponse, run_once
from chalicelib.integration.signing import MAX_AGE_SECONDS, MAX_FUTURE_SECONDS
from chalicelib.integration.tables import IntegrationRecord

# A signature is accepted from 60 s before its timestamp until 300 s after: a claim made at the
# earliest moment must outlive the latest one (plus a minute for clock skew between instances).
REPLAY_WINDOW = timedelta(seconds=MAX_AGE_SECONDS + MAX_FUTURE_SECONDS + 60)
OPERATION = "webhook-signature"


def deliver_once(
    *,
    integration: IntegrationRecord,
    signature: str | None,
    body: bytes,
    now: datetime,
    deliver: Callable[[], StoredResponse],
) -> tuple[StoredResponse, bool]:
    """(answer, replayed). Unsigned deliveries (no signature) always run."""
    if not signature:
        return deliver(), False
    try:
        return run_once(
            organization_id=integration.organization_id,
            operation=f"{OPERATION}#{integration.integration_id}",
            key=hashlib.sha256(signature.encode()).hexdigest(),
            payload=hashlib.sha256(body).hexdigest(),
            now=now,
            action=deliver,
            lifetime=REPLAY_WINDOW,
        )
    except IdempotencyInProgress:
        raise IdempotencyInProgress(
            "An identical signed delivery is still being processed; this one is its replay."
        ) from None
