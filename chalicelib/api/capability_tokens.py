"""Capability tokens in the URL: whoever holds the URL may use it, because the tool that calls it
cannot send a bearer (a cron job's ping, a calendar app's feed). The token is the credential;
its kind finds what it names, or refuses with 404 (an unknown, deleted or rotated token).

- a heartbeat's ping URL (`/heartbeats/{token}`): the heartbeat, over HTTPS only; a ping counts
  against the heartbeat's own bucket (chalicelib.heartbeat.ping);
- a schedule's calendar feed (`/calendars/{token}.ics`): the schedule (chalicelib.oncall.feed);
  its operation counts per caller address, before the token is looked up.

- an export's download link (`/exports/{token}`): the export it names (chalicelib.exports.links,
  signed and expiring, no lookup); its operation counts per caller address.

The one-click links of page emails are the third such token; their kind sits with the console
pages they open (chalicelib.console.pages.email_actions: the browser's visit, then the link; a
refused link is a page saying why).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from chalicelib.api.credential_kinds import CredentialKind, Inbound, Verified

if TYPE_CHECKING:
    from chalicelib.oncall.service import StoredSchedule


@dataclass(frozen=True)
class CalendarFeed:
    token: str
    schedule: StoredSchedule


def _heartbeat_ping(inbound: Inbound) -> Verified:
    from chalicelib.heartbeat import ping

    record = ping.admit(
        token=inbound.path["token"], forwarded_proto=inbound.header("x-forwarded-proto"), settings=inbound.settings
    )
    return Verified(subject=record, bucket=ping.bucket(record.heartbeat_id))


def _calendar_feed(inbound: Inbound) -> Verified:
    from chalicelib.oncall import feed

    token = inbound.path["token"].removesuffix(".ics")
    return Verified(subject=CalendarFeed(token, feed.find_calendar(token)))


def _export_link(inbound: Inbound) -> Verified:
    from chalicelib.exports import links

    return Verified(subject=links.verify(inbound.path["token"], now=inbound.now, settings=inbound.settings))


HEARTBEAT_PING_TOKEN = CredentialKind("heartbeat_ping_token", _heartbeat_ping)
CALENDAR_FEED_TOKEN = CredentialKind("calendar_feed_token", _calendar_feed)
EXPORT_LINK_TOKEN = CredentialKind("export_link_token", _export_link)
