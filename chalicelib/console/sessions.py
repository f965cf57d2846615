"""Console sessions, kept server-side so signing out (or an admin's deactivation) ends them at once.

A session ends after `console_idle_minutes` without a request and `console_absolute_hours`
after sign-in, whichever comes first. The last-seen stamp is written at most once a minute
(a conditional update), not on every page view.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from chalicelib.console.tables import ConsoleSessionRecord
from chalicelib.settings import Settings
from chalicelib.store import best_effort, update_if

TOUCH_EVERY = timedelta(minutes=1)


@dataclass(frozen=True)
class ConsoleSession:
    token_hash: str
    organization_id: str
    user_id: str
    csrf_token: str
    created_at: datetime
    last_seen_at: datetime


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def start(*, organization_id: str, user_id: str, now: datetime, settings: Settings) -> tuple[str, ConsoleSession]:
    """A new session; returns the cookie token (shown to the browser only) and the session."""
    token = secrets.token_urlsafe(32)
    absolute = timedelta(hours=settings.console_absolute_hours)
    record = ConsoleSessionRecord(
        session_hash=_hash(token),
        organization_id=organization_id,
        user_id=user_id,
        csrf_token=secrets.token_urlsafe(32),
        created_at=now,
        last_seen_at=now,
        expires_at=now + absolute,
    )
    record.save()
    return token, _to_session(record)


def _to_session(record: ConsoleSessionRecord) -> ConsoleSession:
    return ConsoleSession(
        token_hash=record.session_hash,
        organization_id=record.organization_id,
        user_id=record.user_id,
        csrf_token=record.csrf_token,
        created_at=record.created_at,
        last_seen_at=record.last_seen_at,
    )


def resume(token: str, *, now: datetime, settings: Settings) -> ConsoleSession | None:
    """The live session of a cookie token, or None (unknown, idle too long, or too old)."""
    if not token or len(token) > 128:
        return None
    try:
        record = ConsoleSessionRecord.get(_hash(token))
    except ConsoleSessionRecord.DoesNotExist:
        return None
    idle_deadline = record.last_seen_at + timedelta(minutes=settings.console_idle_minutes)
    if now >= record.expires_at or now >= idle_deadline:
        end(token)
        return None
    if now - record.last_seen_at >= TOUCH_EVERY:
        # A missing last_seen_at fails the condition: a session deleted meanwhile is not re-created.
        with best_effort("console session touch"):
            update_if(
                record,
                [ConsoleSessionRecord.last_seen_at.set(now)],
                ConsoleSessionRecord.last_seen_at < now,
            )
    return _to_session(record)


def end(token: str) -> None:
    """Sign out: the cookie's session is deleted (a second sign-out is harmless)."""
    if token:
        ConsoleSessionRecord(session_hash=_hash(token)).delete()
