"""Replaying a refused event: which may be replayed, and the claim that replays each at most once.

A replay sends the recorded body and headers through the same admission (but the signature) and
handler as a fresh delivery, as of now (chalicelib.api.event_replay), so an event refused for a
configuration since fixed (no default service, an address not yet allowed, an event rule) becomes
what it would have been. Refused (409), with the reason:
- an event that was not refused: it did what it did, and a replay would do it twice;
- one refused for its signature: a replay must not stand in for a signature;
- one to an integration that requires a signature, whose signature was never checked (it was
  refused before the check, e.g. for its address): the replay would skip it;
- one whose body was not kept whole (over 16 KiB, or not UTF-8);
- one replayed already: only the newest of a chain of replays may be replayed, so a fix never
  turns one refused delivery into two alerts;
- a revoked integration.

The claim: one conditional update on the replayed event (`replay_started_at`, a 60 s lease), then
`replayed_as` names the new event, whatever became of it (refused again included: then the new
event is the one to replay), unless the replay failed on our side (5xx): then the claim is
released and the event may be replayed again, as a sender retries a 5xx.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from chalicelib.eventlog.outcome import refused_for_signature
from chalicelib.eventlog.tables import IntegrationEventRecord
from chalicelib.integration.gate import requires_signature
from chalicelib.integration.tables import IntegrationRecord
from chalicelib.store import best_effort, update_if

LEASE = timedelta(seconds=60)


def why_not_replay(event: IntegrationEventRecord, integration: IntegrationRecord) -> str | None:
    """Why `event` of `integration` (its current item) may not be replayed now (None: it may)."""
    return why_not(
        event,
        integration_state=integration.state,
        signature_required=requires_signature(integration, integration.integration_type),
    )


def why_not(event: IntegrationEventRecord, *, integration_state: str, signature_required: bool) -> str | None:
    """Why `event` may not be replayed (None: it may)."""
    if event.outcome != "refused":
        return (
            f"Only refused events can be replayed: this one was {event.outcome.replace('_', ' ')}, "
            "and a replay would do it again."
        )
    if event.replayed_as:
        return f"This event was replayed already, as {event.replayed_as}: replay that one if it was refused."
    if refused_for_signature(event.error_code):
        return "This event was refused for its signature; a replay must not stand in for a valid signature."
    if signature_required and event.signature != "valid":
        return (
            "This integration requires a signature, and this event's was never checked (it was refused "
            "before the check); a replay must not bypass it."
        )
    if not event.body_whole:
        return "This event's body was not kept whole (over 16 KiB, or not UTF-8), so it cannot be sent again."
    if integration_state != "active":
        return "The integration is revoked; its events cannot be replayed."
    return None


def claim(event: IntegrationEventRecord, now: datetime) -> bool:
    """True for exactly one of racing replays of `event` (or after a replay died past its lease)."""
    fields = IntegrationEventRecord
    condition = (
        (fields.received_at == event.received_at)
        & fields.replayed_as.does_not_exist()
        & (fields.replay_started_at.does_not_exist() | (fields.replay_started_at < now - LEASE))
    )
    return update_if(event, [fields.replay_started_at.set(now)], condition)


def settle(event: IntegrationEventRecord, replayed_as: str) -> None:
    """The replay was recorded as `replayed_as`: `event` may not be replayed again."""
    fields = IntegrationEventRecord
    with best_effort("the replayed event's replayed_as"):
        update_if(event, [fields.replayed_as.set(replayed_as), fields.replay_started_at.remove()])


def release(event: IntegrationEventRecord) -> None:
    """The replay failed (before it was recorded, or with a 5xx of ours): `event` may be replayed again."""
    with best_effort("a replay's claim"):
        update_if(event, [IntegrationEventRecord.replay_started_at.remove()])
