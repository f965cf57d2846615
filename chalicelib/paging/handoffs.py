"""Sends handoff notices: the consumer of `oncall.handoff_notice` (published by the scheduled step
in chalicelib/oncall/handoff_notices.py, with the words already written).

A person is told through the first step of their low-urgency notification rules whose method is
verified (a handoff is not an emergency: nobody is called at 2 AM unless their low rules say so);
when no low step is usable, through the verified method that follows their account email, as a
page falls back (chalicelib/paging/reach.py). The delay of the step does not apply: the notice
goes now, its timing is the schedule's lead. There is no incident, so no timeline entry.

Once per notice: the delivery `handoff#<notice_id>` is claimed first (the producer may publish
a boundary again after a failure; the notice id is stable). A deactivated or deleted person gets
nothing. A provider failure releases the claim and raises, so SQS delivers the message again; on
the final receive the failure is logged and the message is done (not dead-lettered: a redrive
hours later would tell someone about a shift long begun). A message for a boundary more than
MAX_LATENESS past is dropped for the same reason.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib import clock
from chalicelib.contact.profile import ContactMethod
from chalicelib.contact.service import profile
from chalicelib.directory.users import User, get_user
from chalicelib.errors import NotFound
from chalicelib.notification import deliveries
from chalicelib.notification.channels import DeliveryResult
from chalicelib.notification.notices import Notice, schedule_url, send_notice
from chalicelib.oncall.handoff_notices import HANDOFF_NOTICE, MAX_LATENESS
from chalicelib.paging.reach import account_email_step, usable_steps
from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import Message
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.paging")

NOTICE_URGENCY = "low"
KINDS = ("on_call", "off_call")


@dataclass(frozen=True)
class HandoffNotice:
    user_id: str
    schedule_id: str
    kind: str
    at: datetime
    notice_id: str
    subject: str
    text: str
    short_text: str

    @property
    def delivery_id(self) -> str:
        return f"handoff#{self.notice_id}"


def parse_notice(payload: dict[str, Any]) -> HandoffNotice | None:
    """The payload (shared contract 5) as a notice; None when it cannot be sent."""
    try:
        notice = HandoffNotice(
            user_id=str(payload["user_id"]),
            schedule_id=str(payload["schedule_id"]),
            kind=str(payload["kind"]),
            at=clock.parse(str(payload["at"])),
            notice_id=str(payload["notice_id"]),
            subject=str(payload["subject"]),
            text=str(payload["text"]),
            short_text=str(payload["short_text"]),
        )
    except (KeyError, ValueError, TypeError):
        return None
    if notice.kind not in KINDS or not (notice.user_id and notice.notice_id and notice.subject):
        return None
    return notice


def method_for(organization_id: str, user: User, now: datetime) -> ContactMethod | None:
    """The first verified method of the person's low-urgency rules, else their verified account
    email method; None when they have neither."""
    person = profile(organization_id, user, now=now)
    steps = usable_steps(person, NOTICE_URGENCY)
    step = steps[0] if steps else account_email_step(person)
    return step.contact_method if step is not None else None


def _send(
    organization_id: str, notice: HandoffNotice, now: datetime, where: dict[str, Any], *, settings: Settings
) -> DeliveryResult | None:
    """Send to the person's chosen method; None when there is nobody or nothing to send to."""
    try:
        user = get_user(organization_id=organization_id, user_id=notice.user_id)
    except NotFound:
        logger.info("handoff notice for a person who is gone", extra=where)
        return None
    if not user.is_active:
        logger.info("handoff notice for a deactivated person", extra=where)
        return None
    method = method_for(organization_id, user, now)
    if method is None:
        logger.warning("handoff notice: the person has no verified method to be told by", extra=where)
        return None
    where.update(contact_method_id=method.contact_method_id, channel=method.type)
    words = Notice(
        subject=notice.subject,
        text=notice.text,
        short_text=notice.short_text,
        recipient_name=user.name,
        url=schedule_url(notice.schedule_id, settings=settings),
        link_label="Open the schedule",
        sent_at=now,
    )
    # A webhook-style method is named by its id: its URL is sealed, its address only a hint.
    address = method.contact_method_id if method.sealed_destination is not None else method.address
    return send_notice(
        method.type, address, words, organization_id=organization_id, user_id=user.user_id, now=now, settings=settings
    )


@handles(HANDOFF_NOTICE)
def on_handoff_notice(message: Message, settings: Settings) -> None:
    now = clock.now()
    where: dict[str, Any] = {"organization_id": message.organization_id, "message_id": message.message_id}
    notice = parse_notice(message.payload)
    if notice is None:
        logger.warning("handoff notice dropped: it cannot be sent", extra=where)
        return
    where.update(notice_id=notice.notice_id, user_id=notice.user_id)
    if now - notice.at > MAX_LATENESS:
        logger.warning("handoff notice dropped: its handoff is long past", extra=where)
        return
    deliveries.send_once(
        notice.delivery_id,
        now,
        lambda: _send(message.organization_id, notice, now, where, settings=settings),
        final_attempt=message.final_attempt,
        what="handoff notice",
        where=where,
    )
