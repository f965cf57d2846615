"""Pages through the outbound budget: past a person's burst, into their digest instead.

Each page of a person charges the budget once per channel it goes out on (two SMS numbers of one
person are one page on SMS): the person's burst on that channel (`page_burst_per_person`, 5 in 10
minutes by default) and the organization's cap for the channel. A page either limit refuses is
not sent and not dropped: it joins the person's digest for that channel
(chalicelib/notification/digests.py), which goes out when the window ends, and the incident's
timeline says so. So a person paged by 3 incidents at once gets all 3; by 10 in a burst, the first
5 and then one message naming the other 5, most urgent first.

A channel whose every send failed at the provider gives its charge back (SQS retries the page).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, cast

from chalicelib.budget import service as budget
from chalicelib.budget.limits import wait_words
from chalicelib.budget.rules import Send
from chalicelib.notification import digests
from chalicelib.notification.channels import HOOK_CHANNELS, ChannelName, DeliveryResult, Recipient
from chalicelib.settings import Settings


class PageTarget(Protocol):
    @property
    def channel(self) -> str: ...

    @property
    def address(self) -> Recipient: ...


@dataclass
class Admission:
    """What the budget said about one channel of a page: allowed (its decision, to refund) or
    digested (the result every target on it reports)."""

    decision: budget.Decision | None = None
    digested: DeliveryResult | None = None


def address_of(channel: str, recipient: Recipient) -> str | None:
    """The destination a channel would send to (None: the person has none; the channel says so)."""
    if channel == "email":
        return recipient.email
    if channel in ("sms", "voice"):
        return recipient.phone
    if channel == "slack":
        return recipient.slack_user_id
    if channel in HOOK_CHANNELS:  # a webhook URL is a secret: counted by its contact method
        return recipient.contact_method_id if recipient.hook_url else None
    return recipient.user_id  # a later channel's address lives with the person


def admit(
    *,
    organization_id: str | None,
    incident_number: str,
    person: Recipient,
    targets: Sequence[PageTarget],
    now: datetime,
    settings: Settings,
) -> dict[str, Admission]:
    """One charge per channel of the page; a refused channel joins the person's digest."""
    addresses: dict[str, list[str]] = {}
    for target in targets:
        address = address_of(target.channel, target.address)
        if address:
            addresses.setdefault(target.channel, []).append(address)
    admissions: dict[str, Admission] = {}
    for channel, found in addresses.items():
        decision = budget.spend(
            Send(channel, found[0], "page", organization_id, person.user_id), now, settings=settings
        )
        if decision.refusal is None:
            admissions[channel] = Admission(decision=decision)
            continue
        slot = digests.include(
            organization_id=organization_id or "",
            user_id=person.user_id,
            channel=channel,
            addresses=found,
            incident_number=incident_number,
            now=now,
            settings=settings,
        )
        wait = max(1, int((slot.due_at - now).total_seconds() + 0.999))
        why = f"{decision.refusal.message.split(';')[0]}; in the digest that goes out in {wait_words(wait)}."
        admissions[channel] = Admission(digested=DeliveryResult.in_digest(cast(ChannelName, channel), why, wait))
    return admissions


def settle(admissions: dict[str, Admission], results: Sequence[DeliveryResult]) -> None:
    """Give back the charge of a channel nothing was delivered on because its provider failed."""
    for channel, admission in admissions.items():
        mine = [result for result in results if result.channel == channel]
        failed = bool(mine) and not any(result.sent for result in mine)
        if admission.decision is not None and failed and any(result.provider_failure for result in mine):
            admission.decision.refund()
