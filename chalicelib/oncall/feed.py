"""A schedule's calendar feed: its secret subscribe URL, rotating it, and the RFC 5545 text.

The feed is public (calendar apps cannot send a bearer credential): the random token in the URL
is the credential, found through the schedules table's `ical-token-index` (one Query). The feed
covers FEED_PAST back to FEED_FUTURE ahead; rotating the token makes the old URL a 404.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from chalicelib.directory.users import get_users
from chalicelib.errors import NotFound
from chalicelib.oncall.ical import render_ical
from chalicelib.oncall.rotation import final_shifts
from chalicelib.oncall.service import StoredSchedule, get_record, get_schedule, to_domain
from chalicelib.oncall.tables import ScheduleRecord
from chalicelib.settings import Settings
from chalicelib.store import RetryableConflict, retry_on_conflict, save_if

FEED_PAST = timedelta(days=14)
FEED_FUTURE = timedelta(days=93)
_TOKEN_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def new_token() -> str:
    return secrets.token_urlsafe(32)


def calendar_url(token: str, *, settings: Settings) -> str:
    return f"{settings.public_base_url.rstrip('/')}/calendars/{token}.ics"


def ical_url(*, organization_id: str, schedule_id: str, settings: Settings) -> str:
    """The subscribe URL of the schedule's calendar feed. Whoever holds it can read the feed."""
    return calendar_url(
        get_schedule(organization_id=organization_id, schedule_id=schedule_id).ical_token, settings=settings
    )


def rotate_ical_token(*, organization_id: str, schedule_id: str, now: datetime, settings: Settings) -> str:
    """A new feed URL; the old one answers 404 from now on."""

    def attempt() -> str:
        record = get_record(organization_id, schedule_id, consistent=True)
        record.ical_token = new_token()
        record.updated_at = now
        if not save_if(record, ScheduleRecord.schedule_id.exists()):
            raise RetryableConflict()
        return calendar_url(record.ical_token, settings=settings)

    return retry_on_conflict(attempt, what="schedule")


def find_by_ical_token(token: str) -> StoredSchedule | None:
    """One Query on the token index; None for an unknown or malformed token."""
    if not 20 <= len(token) <= 100 or not set(token) <= _TOKEN_ALPHABET:
        return None
    for record in ScheduleRecord.by_ical_token.query(token, limit=1):
        return to_domain(record)
    return None


def find_calendar(token: str) -> StoredSchedule:
    """The schedule a feed token names (the feed URL's credential); 404 when unknown."""
    stored = find_by_ical_token(token)
    if stored is None:
        raise NotFound("No calendar has this address.")
    return stored


def ical_feed(*, token: str, now: datetime, settings: Settings) -> str:
    """The RFC 5545 feed (FEED_PAST back to FEED_FUTURE ahead) for a feed token; 404 when unknown."""
    return render_feed(find_calendar(token), token=token, now=now, settings=settings)


def render_feed(
    stored: StoredSchedule, *, token: str, now: datetime, person: str | None = None, settings: Settings
) -> str:
    """The RFC 5545 feed of the schedule `token` named (`find_calendar`); with `person` (a user id),
    only that person's shifts: the link each member subscribes to for their own time on call."""
    schedule = stored.schedule
    shifts = final_shifts(schedule, now - FEED_PAST, now + FEED_FUTURE)
    if person:
        shifts = [shift for shift in shifts if shift.user_id == person]
    users = get_users(organization_id=stored.organization_id, user_ids=[shift.user_id for shift in shifts])
    names = {user_id: user.name or user.email or user_id for user_id, user in users.items()}
    return render_ical(
        schedule.name,
        shifts,
        names,
        now=now,
        calendar_url=calendar_url(token, settings=settings),
        schedule_id=schedule.schedule_id,
        time_zone=schedule.time_zone,
    )
