"""The one gate every message passes on its way out: the outbound budget (chalicelib/budget).

`send_within_budget` charges the budget for one message and sends it only when the budget allows;
a refusal is a DeliveryResult that is neither sent nor retried (`over_budget`, OVER_BUDGET) and a
log line, so a worker's refusal is never silent. A send whose provider failed gives its charge
back, so SQS's retry of the message is not counted twice.

Pages take the same gate through chalicelib/notification/page_budget.py, which turns a page past
the burst into a digest instead of a refusal. A request that causes a message charges at the
request (`chalicelib.budget.service.spend_or_raise`: the request's 429) and the message it queues
says so (`charged=True` here), so it is counted once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import cast

from chalicelib.budget import service as budget
from chalicelib.budget.rules import Purpose, Send
from chalicelib.notification.channels import ChannelName, DeliveryResult
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.notification")

# A queue message's payload key: the request that queued the message charged the budget already.
CHARGED = "budget_charged"


def send_within_budget(
    *,
    channel: str,
    destination: str,
    purpose: Purpose,
    organization_id: str | None,
    user_id: str | None = None,
    now: datetime,
    deliver: Callable[[], DeliveryResult],
    charged: bool = False,
    settings: Settings,
) -> DeliveryResult:
    """`deliver()` if the budget allows this message (or a request charged it already), else an
    OVER_BUDGET result and a warning naming the limit."""
    if charged:
        return deliver()
    send = Send(channel, destination, purpose, organization_id, user_id)
    decision = budget.spend(send, now, settings=settings)
    if decision.refusal is not None:
        logger.warning(
            "message not sent: over the outbound budget",
            extra={
                "channel": channel,
                "purpose": purpose,
                "organization_id": organization_id,
                "user_id": user_id,
                "limit": decision.refusal.limit,
                "retry_after": decision.refusal.retry_after,
            },
        )
        return DeliveryResult.refused(
            cast(ChannelName, channel), decision.refusal.message, decision.refusal.retry_after
        )
    result = deliver()
    if not result.sent and result.provider_failure:
        decision.refund()
    return result
