"""Sends coverage notices: the consumer of `oncall.coverage_notice` (published by the coverage
check, chalicelib/paging/coverage_check.py), one message per owner and set of new gaps.

Like a handoff notice, it goes through the first verified step of the person's low-urgency rules
(else their verified account email); a gap ahead is not an emergency. Once per person and notice:
the delivery `coverage#<notice_id>#<user_id>` is claimed first. A deactivated or deleted person
gets nothing; a provider failure is retried by SQS, then logged on the final receive.
"""

from __future__ import annotations

import logging
from typing import Any

from chalicelib import clock
from chalicelib.directory.users import get_user, zone_of
from chalicelib.errors import NotFound
from chalicelib.notification import deliveries
from chalicelib.notification.channels import DeliveryResult
from chalicelib.notification.notices import Notice, schedule_url, send_notice
from chalicelib.oncall.coverage_text import render_coverage_notice
from chalicelib.paging.coverage_check import COVERAGE_NOTICE
from chalicelib.paging.handoffs import method_for
from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import Message
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.paging")


def _url(kind: str, subject_id: str, *, settings: Settings) -> str:
    if kind == "schedule":
        return schedule_url(subject_id, settings=settings)
    return f"{settings.app_url()}/escalation-policies/{subject_id}"


@handles(COVERAGE_NOTICE)
def on_coverage_notice(message: Message, settings: Settings) -> None:
    now = clock.now()
    payload = message.payload
    where: dict[str, Any] = {"organization_id": message.organization_id, "message_id": message.message_id}
    try:
        user_id, kind, subject_id = str(payload["user_id"]), str(payload["kind"]), str(payload["subject_id"])
        gaps = [(clock.parse(str(start)), clock.parse(str(end))) for start, end in payload["gaps"]]
        levels = [tuple(int(n) for n in found) for found in payload.get("levels") or []]
        name, notice_id = str(payload["name"]), str(payload["notice_id"])
    except (KeyError, ValueError, TypeError):
        logger.warning("coverage notice dropped: unreadable", extra=where)
        return
    if not gaps:
        return
    where.update(notice_id=notice_id, user_id=user_id)

    def send() -> DeliveryResult | None:
        try:
            user = get_user(organization_id=message.organization_id, user_id=user_id)
        except NotFound:
            return None
        method = method_for(message.organization_id, user, now) if user.is_active else None
        if method is None:
            logger.info("coverage notice: nobody to tell, or no verified method", extra=where)
            return None
        zone = zone_of(user)
        words = render_coverage_notice(kind=kind, name=name, gaps=gaps, levels=levels, time_zone=zone, now=now)
        notice = Notice(
            subject=words.subject,
            text=words.text,
            short_text=words.short_text,
            recipient_name=user.name,
            url=_url(kind, subject_id, settings=settings),
            link_label=f"Open the {'schedule' if kind == 'schedule' else 'escalation policy'}",
            sent_at=now,
            time_zone=zone,
        )
        return send_notice(method.type, method.address, notice, settings=settings)

    deliveries.send_once(
        f"coverage#{notice_id}#{user_id}",
        now,
        send,
        final_attempt=message.final_attempt,
        what="coverage notice",
        where=where,
    )
