"""A ping: GET or POST /heartbeats/{token}, no bearer (the token is the credential).

One GetItem by the heartbeat id in the token, the secret checked against its stored hash, HTTPS
required (as for inbound webhooks): `admit`, the ping token credential's authenticator (the
request pipeline then charges the heartbeat's rate-limit bucket, `bucket`). Then one
conditional UpdateItem on the state read (retried after a concurrent check or edit). A paused
heartbeat accepts the ping and ignores it. When the ping ends an outage, the outage is listed as
unresolved in that same write, and resolved after it (chalicelib.heartbeat.outages): a crash in
between leaves it listed, and the next ping resolves it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from chalicelib.errors import HttpsRequired, NotFound
from chalicelib.heartbeat import outages, repository, rules
from chalicelib.heartbeat.rules import Beat
from chalicelib.heartbeat.tables import HeartbeatRecord
from chalicelib.ratelimit.buckets import Bucket
from chalicelib.settings import Settings
from chalicelib.store import RetryableConflict, retry_on_conflict, update_unversioned_if

PING_BUCKET = "webhook"  # the inbound webhook's bucket and limit, per heartbeat


@dataclass(frozen=True)
class Pinged:
    heartbeat_id: str
    beat: Beat
    ignored: bool  # paused
    resolved_outages: list[int]


def _unknown() -> NotFound:
    return NotFound("No heartbeat has this ping URL (unknown, deleted, or its URL was regenerated).")


def _find(token: str, *, settings: Settings) -> HeartbeatRecord:
    parts = rules.split_token(token)
    if parts is None:
        raise _unknown()
    heartbeat_id, secret = parts
    record = repository.read(heartbeat_id)
    if record is None or not rules.secret_matches(
        record.secret_hash, settings.api_key_hmac_secret, heartbeat_id, secret
    ):
        raise _unknown()
    return record


def bucket(heartbeat_id: str) -> Bucket:
    """Where a ping counts: the inbound webhook's category and limit, per heartbeat."""
    return Bucket(PING_BUCKET, f"heartbeat#{heartbeat_id}", "More than the allowed pings per minute; retry later.")


def https_allowed(forwarded_proto: str | None, *, settings: Settings) -> bool:
    """As for inbound webhooks: the token must not travel in clear (API Gateway always sets
    X-Forwarded-Proto); the local stack may allow plain HTTP."""
    if (forwarded_proto or "").split(",")[0].strip().lower() == "https":
        return True
    return settings.is_local and settings.local_allow_http_webhooks


def admit(*, token: str, forwarded_proto: str | None, settings: Settings) -> HeartbeatRecord:
    """The heartbeat a ping URL names, over HTTPS: 404 for an unknown token, 403 for plain HTTP."""
    record = _find(token, settings=settings)
    if not https_allowed(forwarded_proto, settings=settings):
        raise HttpsRequired("Ping URLs work over HTTPS only.")
    return record


def record_ping(*, record: HeartbeatRecord, now: datetime, settings: Settings) -> Pinged:
    """The ping of an admitted heartbeat (`admit`)."""
    state: dict[str, HeartbeatRecord] = {"record": record}

    def attempt() -> rules.PingOutcome:
        current = state["record"]
        read = repository.beat_of(current)
        outcome = rules.pinged(read, now)
        if outcome.ignored:
            return outcome
        actions = repository.state_actions(outcome.beat)
        if outcome.ended_outage is not None:
            actions.append(HeartbeatRecord.unresolved_outages.add({outcome.ended_outage}))
        # The secret too: a URL regenerated since the read stops at once.
        same_secret = HeartbeatRecord.secret_hash == record.secret_hash
        if update_unversioned_if(current, actions, repository.unchanged(read) & same_secret):
            return outcome
        latest = repository.read(current.heartbeat_id)
        if latest is None or latest.secret_hash != record.secret_hash:
            raise _unknown()  # deleted or regenerated meanwhile
        state["record"] = latest
        raise RetryableConflict()

    outcome = retry_on_conflict(attempt, what="heartbeat")
    written = state["record"]
    resolved = [] if outcome.ignored else outages.resolve_pending(written, now, settings=settings)
    return Pinged(written.heartbeat_id, outcome.beat, outcome.ignored, resolved)
