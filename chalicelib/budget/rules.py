"""Which counters a message charges, and the sliding-window arithmetic. Pure.

A message has a purpose, and the purpose says which limits it counts against (docs/SECURITY.md):

| purpose | counted against, narrowest first |
|---|---|
| page | page_burst_per_person (per person and channel; past it, a digest), the org's channel |
| digest | the org's channel (a digest is at most one per person, channel and burst window) |
| verification | verification_per_destination (all orgs), verification_per_person, the org's channel |
| reply (to a verified number) | messages_per_destination, the org's SMS |
| unknown_sender_reply | unknown_sender_reply_per_number, unknown_sender_replies (the deployment's) |
| notice (handoffs, a disabled webhook) | messages_per_destination, the org's channel |
| confirmation (a status subscription) | confirmation_per_destination (all orgs), the org's subscriber emails |
| subscriber_notice (and a removed subscriber) | messages_per_destination, the org's subscriber emails |

A destination that has not proven it wants Tocsin's messages (a number being verified, a mailbox
asked to confirm, an unknown sender) is counted across every organization; one that has is
counted within its organization.

Windows slide: a counter is kept per fixed window, and the previous window's count, weighted by
the share of it the sliding window still covers (rounded up), counts against the current one. So
no window of the limit's length ever holds much more than the limit, even across a boundary,
where fixed windows alone would allow twice the limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from chalicelib.budget.destinations import destination_key

Purpose = Literal[
    "page",
    "digest",
    "verification",
    "reply",
    "unknown_sender_reply",
    "notice",
    "confirmation",
    "subscriber_notice",
]
PURPOSES: tuple[Purpose, ...] = (
    "page",
    "digest",
    "verification",
    "reply",
    "unknown_sender_reply",
    "notice",
    "confirmation",
    "subscriber_notice",
)
# Every channel that is not a phone or email is a chat channel (Slack now; Teams, Mattermost,
# Discord, Google Chat, ntfy, Pushover when they come): counted together, per organization.
_ORGANIZATION_LIMITS = {
    "sms": "sms_per_organization",
    "voice": "voice_per_organization",
    "email": "email_per_organization",
}
_SUBSCRIBER_MAIL: frozenset[Purpose] = frozenset({"confirmation", "subscriber_notice"})
_EPSILON = 1e-9


@dataclass(frozen=True)
class Send:
    """One message about to leave: its channel, its address as the provider takes it, why it is
    sent, and whose it is (None: no organization or no person, e.g. a reply to an unknown number)."""

    channel: str
    destination: str
    purpose: Purpose
    organization_id: str | None
    user_id: str | None = None


@dataclass(frozen=True)
class Counter:
    limit: str  # a name of chalicelib.budget.limits.LIMITS
    subject: str  # whose count: a destination, a person, an organization, the deployment

    @property
    def key(self) -> str:
        return f"outbound#{self.limit}#{self.subject}"


def organization_limit(send: Send) -> str:
    if send.channel == "email" and send.purpose in _SUBSCRIBER_MAIL:
        return "subscriber_email_per_organization"
    return _ORGANIZATION_LIMITS.get(send.channel, "chat_per_organization")


def counters_for(send: Send) -> list[Counter]:
    """The counters `send` charges, narrowest first (so a refusal there spends nothing broader)."""
    where = destination_key(send.channel, send.destination)
    org = send.organization_id
    person = f"{org}/{send.user_id}" if org and send.user_id else None
    within_org = f"{org}/{where}" if org else where
    counters: list[Counter] = []
    if send.purpose == "page" and person:
        counters.append(Counter("page_burst_per_person", f"{person}/{send.channel}"))
    elif send.purpose == "verification":
        counters.append(Counter("verification_per_destination", where))
        if person:
            counters.append(Counter("verification_per_person", person))
    elif send.purpose == "confirmation":
        counters.append(Counter("confirmation_per_destination", where))
    elif send.purpose == "unknown_sender_reply":
        return [Counter("unknown_sender_reply_per_number", where), Counter("unknown_sender_replies", "deployment")]
    elif send.purpose in ("reply", "notice", "subscriber_notice"):
        counters.append(Counter("messages_per_destination", within_org))
    if org:
        counters.append(Counter(organization_limit(send), org))
    return counters


# ---------------------------------------------------------------- sliding windows


def window_start(epoch: float, seconds: int) -> int:
    return int(epoch // seconds) * seconds


def carried_over(previous_hits: int, elapsed: float, seconds: int) -> int:
    """The previous window's hits the sliding window still covers, rounded up."""
    share = max(0.0, (seconds - elapsed) / seconds)
    return max(0, math.ceil(previous_hits * share - _EPSILON))


def allowance(limit: int, previous_hits: int, elapsed: float, seconds: int) -> int:
    """How many sends the current fixed window may hold now: the limit less what is carried over."""
    return max(0, limit - carried_over(previous_hits, elapsed, seconds))


def seconds_until_room(limit: int, previous_hits: int, current_hits: int, elapsed: float, seconds: int) -> int:
    """When one more send fits (Retry-After): later in this window, once enough of the previous one
    has slid out; else in the next, once enough of this one has (counting no more sends)."""
    if limit <= 0:
        return max(1, math.ceil(seconds - elapsed))
    room = limit - current_hits - 1  # carried-over hits this window can still take
    if room >= 0:
        if previous_hits <= room:
            return 1
        needed = seconds * (1 - room / previous_hits)  # elapsed at which ceil(previous * share) <= room
        if needed < seconds:
            return max(1, math.ceil(needed - elapsed - _EPSILON))
    into_next = seconds * max(0.0, 1 - (limit - 1) / current_hits) if current_hits else 0.0
    return max(1, math.ceil(seconds - elapsed + into_next - _EPSILON))
