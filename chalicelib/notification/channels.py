"""The channel interface and its value types. Pure: no I/O here.

A channel sends one notification to one person and reports what happened as a DeliveryResult;
it never raises for a delivery problem. Two kinds of failure are told apart, because the page
operation answers differently for them (spec: 409 when every channel lacked contact details,
502 when the provider could not deliver):
- missing contact: the person has no address for the channel; the provider is never called;
- provider failure: the provider refused or could not be reached (worth retrying later).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

ChannelName = Literal[
    "email", "slack", "sms", "voice", "teams", "mattermost", "ntfy", "discord", "google_chat", "pushover"
]
# Every channel a person can be reached on (their contact method types).
CONTACT_CHANNELS: tuple[ChannelName, ...] = (
    "email",
    "slack",
    "sms",
    "voice",
    "teams",
    "mattermost",
    "ntfy",
    "discord",
    "google_chat",
    "pushover",
)
# How pages, timelines and errors name each channel.
CHANNEL_LABELS: dict[str, str] = {
    "email": "Email",
    "slack": "Slack",
    "sms": "SMS",
    "voice": "Voice call",
    "teams": "Teams",
    "mattermost": "Mattermost",
    "ntfy": "ntfy",
    "discord": "Discord",
    "google_chat": "Google Chat",
    "pushover": "Pushover",
}
# The webhook-style channels: a POST to the person's own URL (chalicelib/notification/hooks.py).
HOOK_CHANNELS: tuple[ChannelName, ...] = ("teams", "mattermost", "ntfy", "discord", "google_chat", "pushover")
# The spec's page operation (POST /api/v1/incidents/{id}/page) offers only these two.
CHANNEL_NAMES: tuple[ChannelName, ...] = ("email", "slack")
CONTACT_DETAILS_MISSING = "CONTACT_DETAILS_MISSING"
PROVIDER_ERROR = "PROVIDER_ERROR"
OVER_BUDGET = "OVER_BUDGET"  # the outbound budget refused it (chalicelib/notification/gate.py)
PAGE_DIGESTED = "PAGE_DIGESTED"  # past the page burst: in the person's next digest (page_budget.py)

Outcome = Literal["delivered", "missing_contact", "provider_failure"]


@dataclass(frozen=True)
class Notification:
    """What to tell the person. `url` is the incident's page in the responder console; `at` is
    when the page was asked for (the email shows it); `assigned_to` is the assignee's name or
    email (None: unassigned); `organization_id` lets a channel sign links that act on the incident
    (the email's one-click links; None: no such links). The rest is what a responder needs besides
    (docs/PAGES.md): the incident's description, its alert's labels, source and runbook links
    (http(s) only, chalicelib/notification/page_facts.py), when it opened, and the recipient's
    time zone every time is shown in."""

    incident_number: str
    title: str
    severity: str
    urgency: str
    message: str | None
    url: str
    at: datetime | None = None
    service_name: str | None = None
    assigned_to: str | None = None
    # The incident's organization: answerable pages carry it (Slack's buttons, a call's keys, email links).
    organization_id: str | None = None
    description: str | None = None
    labels: tuple[tuple[str, str], ...] = ()
    source_url: str | None = None
    source_name: str | None = None  # "Alertmanager": the source link's label
    runbook_url: str | None = None
    opened_at: datetime | None = None
    time_zone: str = "UTC"  # the recipient's (chalicelib.directory.users.zone_of)


@dataclass(frozen=True)
class Recipient:
    user_id: str
    name: str | None
    email: str | None
    slack_user_id: str | None
    phone: str | None = None  # E.164, for SMS and voice
    time_zone: str | None = None  # the person's own (None: the organization's)
    # A webhook-style channel's destination: the method's id, its URL and ntfy's access token
    # (secrets: never in a repr, a log line or a result).
    contact_method_id: str | None = None
    hook_url: str | None = field(default=None, repr=False)
    hook_token: str | None = field(default=None, repr=False)

    @property
    def display_name(self) -> str:
        return self.name or self.email or self.user_id


@dataclass(frozen=True)
class DeliveryResult:
    channel: ChannelName
    sent: bool
    error_code: str | None = None
    message: str | None = None
    missing_contact: bool = False
    provider_failure: bool = False
    provider_message_id: str | None = None  # SES or SNS MessageId, Slack ts, call sid, when sent
    # Not sent because the outbound budget refused it; `retry_after`: seconds until there is room
    # (a page past its burst: until its digest goes out, `digested`).
    over_budget: bool = False
    retry_after: int | None = None
    digested: bool = False

    @classmethod
    def delivered(cls, channel: ChannelName, provider_message_id: str | None = None) -> DeliveryResult:
        return cls(channel, True, provider_message_id=provider_message_id)

    @classmethod
    def contact_missing(cls, channel: ChannelName, what: str) -> DeliveryResult:
        return cls(
            channel,
            False,
            error_code=CONTACT_DETAILS_MISSING,
            message=f"The person has no {what}.",
            missing_contact=True,
        )

    @classmethod
    def refused(cls, channel: ChannelName, message: str, retry_after: int) -> DeliveryResult:
        return cls(channel, False, error_code=OVER_BUDGET, message=message, over_budget=True, retry_after=retry_after)

    @classmethod
    def in_digest(cls, channel: ChannelName, message: str, retry_after: int) -> DeliveryResult:
        return cls(
            channel,
            False,
            error_code=PAGE_DIGESTED,
            message=message,
            over_budget=True,
            retry_after=retry_after,
            digested=True,
        )

    @classmethod
    def provider_failed(cls, channel: ChannelName, error_code: str, message: str) -> DeliveryResult:
        return cls(channel, False, error_code=error_code, message=message, provider_failure=True)


class Channel(Protocol):
    name: ChannelName

    def send(self, notification: Notification, recipient: Recipient) -> DeliveryResult: ...


def classify(results: Sequence[DeliveryResult]) -> Outcome:
    """The page outcome: delivered when any channel delivered; missing_contact when every channel
    failed for lack of contact details; otherwise (some provider failure, nothing delivered)
    provider_failure."""
    if any(result.sent for result in results):
        return "delivered"
    if results and all(result.missing_contact for result in results):
        return "missing_contact"
    return "provider_failure"


# ---------------------------------------------------------------- rendering (shared by the channels)


def subject_line(notification: Notification) -> str:
    """`[SEV1][high] INC-2026-0001: Checkout down`, on one line whatever the title holds."""
    title = " ".join(notification.title.split())
    return f"[{notification.severity}][{notification.urgency}] {notification.incident_number}: {title}"


def assignee_label(notification: Notification) -> str:
    return notification.assigned_to or "Unassigned"


def one_line(value: str, limit: int) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"
