"""Idempotency-Key handling, exactly the spec's rules.

1. same key, same payload: the original status and body are replayed;
2. same key, different payload: 409 IDEMPOTENCY_KEY_REUSED;
3. same key while the first request runs: 409 IDEMPOTENCY_IN_PROGRESS;
4. no key: nothing here runs.
The claim is one conditional PutItem, so of N racing requests exactly one proceeds.
A request that fails with an error releases its claim: a retry may then succeed.
The claim, run and release are the delivery kernel's (chalicelib/delivery/claims.py, `run_once`):
an Idempotency-Key is a lease like a notification's delivery id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pynamodb.exceptions import DoesNotExist

from chalicelib.delivery import claims
from chalicelib.errors import IdempotencyInProgress, IdempotencyKeyReused, ValidationFailed
from chalicelib.idempotency.tables import IdempotencyRecord
from chalicelib.store import best_effort

RECORD_LIFETIME = timedelta(hours=24)
# How long a claim may stay in progress before a retry can take it over (a crashed request).
LEASE = timedelta(seconds=60)
MAX_KEY_LENGTH = 255


@dataclass(frozen=True)
class StoredResponse:
    status: int
    body: Any


def payload_fingerprint(payload: Any) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def validate_key(key: str) -> str:
    key = key.strip()
    if not key or len(key) > MAX_KEY_LENGTH or not key.isprintable():
        raise ValidationFailed.for_field("Idempotency-Key", f"must be 1 to {MAX_KEY_LENGTH} printable characters")
    return key


def run_once(
    *,
    organization_id: str,
    operation: str,
    key: str,
    payload: Any,
    now: datetime,
    action: Callable[[], StoredResponse],
    lifetime: timedelta = RECORD_LIFETIME,
) -> tuple[StoredResponse, bool]:
    """Run `action` once per key (remembered for `lifetime`); returns (response, replayed)."""
    record_key = f"{organization_id}#{operation}#{validate_key(key)}"
    fingerprint = payload_fingerprint(payload)
    record = IdempotencyRecord(
        record_key,
        state="in_progress",
        payload_hash=fingerprint,
        lease_expires_at=now + LEASE,
        expires_at=now + lifetime,
    )
    r = IdempotencyRecord
    claim = claims.Claim(
        record,
        in_progress=r.state == "in_progress",
        # Expired (TTL deletes lazily), or in progress past its lease: the first request died.
        takeover=(r.expires_at < now) | ((r.state == "in_progress") & (r.lease_expires_at < now)),
        what="an idempotency claim",
    )

    def remember(response: StoredResponse) -> bool:
        with best_effort("record an idempotent response"):  # the work is done; at worst a retry after 24 h is new
            record.update(
                actions=[
                    r.state.set("completed"),
                    r.response_status.set(response.status),
                    r.response_body.set(json.dumps(response.body, default=str)),
                ],
            )
        return True

    done = claims.run_once(claim, action, remember)
    if done is None:
        return _existing(record_key, fingerprint, now), True
    return done.result, False


def _existing(record_key: str, fingerprint: str, now: datetime) -> StoredResponse:
    try:
        record = IdempotencyRecord.get(record_key, consistent_read=True)
    except DoesNotExist:
        # Released between our claim attempt and this read: the original failed; ask for a retry.
        raise IdempotencyInProgress() from None
    if record.payload_hash != fingerprint:
        raise IdempotencyKeyReused()
    if record.state != "completed" or record.response_status is None or record.response_body is None:
        raise IdempotencyInProgress()
    return StoredResponse(status=int(record.response_status), body=json.loads(record.response_body))
