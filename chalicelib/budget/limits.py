"""The named limits of the outbound budget: what each counts, per what, in which window. Pure.

Each limit has the deployment's value (a setting, `BUDGET_<NAME>`, that an operator raises or
lowers) and, for an organization, the value its owner set, which may only be lower: the value in
effect is the smaller. The two limits on replies to unknown numbers belong to the deployment (its
one inbound number answers for every organization), so no owner changes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from chalicelib.errors import ValidationFailed
from chalicelib.settings import Settings

Per = Literal["destination", "person", "person_and_channel", "organization", "deployment"]
Window = Literal["hour", "day", "page_burst"]
HOUR = 3600
DAY = 86400


@dataclass(frozen=True)
class Limit:
    name: str
    per: Per
    window: Window
    counts: str  # what one unit is, for the docs, the settings API and a refusal's message
    owner_may_lower: bool = True

    @property
    def setting(self) -> str:
        return f"budget_{self.name}"


LIMITS: tuple[Limit, ...] = (
    Limit("verification_per_destination", "destination", "hour", "verification codes sent to one phone number"),
    Limit("verification_per_person", "person", "hour", "verification codes one person asks for"),
    Limit("page_burst_per_person", "person_and_channel", "page_burst", "pages to one person on one channel"),
    Limit("sms_per_organization", "organization", "hour", "SMS"),
    Limit("voice_per_organization", "organization", "hour", "voice calls"),
    Limit("email_per_organization", "organization", "hour", "emails to the organization's people"),
    Limit("chat_per_organization", "organization", "hour", "Slack and chat messages"),
    Limit("subscriber_email_per_organization", "organization", "hour", "emails to status page subscribers"),
    Limit("confirmation_per_destination", "destination", "hour", "subscription confirmations sent to one mailbox"),
    Limit("messages_per_destination", "destination", "hour", "notices and SMS replies sent to one address"),
    Limit(
        "unknown_sender_reply_per_number",
        "destination",
        "day",
        "replies to one number that is no verified contact",
        owner_may_lower=False,
    ),
    Limit("unknown_sender_replies", "deployment", "hour", "replies to numbers that are no verified contact", False),
)
BY_NAME: dict[str, Limit] = {limit.name: limit for limit in LIMITS}


def window_seconds(limit: Limit, settings: Settings) -> int:
    if limit.window == "page_burst":
        return settings.budget_page_burst_minutes * 60
    return DAY if limit.window == "day" else HOUR


def window_words(seconds: int) -> str:
    """`an hour`, `a day`, `in 10 minutes`: how a message names a window."""
    if seconds == HOUR:
        return "an hour"
    if seconds == DAY:
        return "a day"
    minutes = seconds // 60
    return f"in {minutes} minute{'s' if minutes != 1 else ''}" if seconds % 60 == 0 else f"in {seconds} seconds"


def wait_words(seconds: int) -> str:
    """`45 seconds`, `77 minutes`, `3 hours`: a wait as a person reads it (rounded up)."""
    if seconds < 120:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    if seconds < 7200:
        return f"{-(-seconds // 60)} minutes"
    return f"{-(-seconds // 3600)} hours"


def deployment_values(settings: Settings) -> dict[str, int]:
    return {limit.name: int(getattr(settings, limit.setting)) for limit in LIMITS}


def in_effect(deployment: Mapping[str, int], lowered: Mapping[str, int]) -> dict[str, int]:
    """The deployment's values, each replaced by the owner's where that is lower."""
    return {
        name: min(value, lowered[name]) if name in lowered and BY_NAME[name].owner_may_lower else value
        for name, value in deployment.items()
    }


def check_changes(changes: Mapping[str, int | None], deployment: Mapping[str, int]) -> dict[str, int | None]:
    """An owner's changes, checked: a known limit an owner may lower, to a whole number from 1 to
    the deployment's value (None: back to the deployment's). A 400 naming `limits.<name>` for each
    one that is not."""
    problems: list[dict[str, str]] = []
    for name, value in changes.items():
        where = f"limits.{name}"
        limit = BY_NAME.get(name)
        if limit is None:
            problems.append({"field": where, "message": f"no such limit; one of {', '.join(BY_NAME)}"})
        elif not limit.owner_may_lower:
            problems.append({"field": where, "message": "set by the deployment for every organization"})
        elif value is not None and not 1 <= value <= deployment[name]:
            problems.append(
                {"field": where, "message": f"must be from 1 to {deployment[name]} (the deployment's limit)"}
            )
    if problems:
        raise ValidationFailed.for_fields(problems, "An owner may only lower a limit, to at least 1.")
    return dict(changes)
