"""A worker's message past the outbound budget: not sent, not retried, and a warning naming the
limit (never silent): handoff notices, a subscription owner's email, a subscriber's confirmation."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from chalicelib.notification.channels import DeliveryResult
from chalicelib.notification.gate import send_within_budget
from chalicelib.queue import consumers
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, reconfigure
from tests.service.test_paging_handoff_notices import emails_to, frozen, notice, person

__all__ = ["frozen"]


def test_handoff_notices_past_the_destinations_limit_are_logged_not_sent(
    org: Org, frozen: None, caplog: pytest.LogCaptureFixture
) -> None:
    reconfigure(BUDGET_MESSAGES_PER_DESTINATION="2")
    linus = person(org, "Linus")
    with caplog.at_level(logging.WARNING, logger="tocsin"):
        for hours in range(3):
            assert (
                consumers.handle(notice(org, linus, at=NOW + timedelta(minutes=30 + hours)), settings=get_settings())
                is True
            )
    assert len(emails_to("linus@example.com")) == 2
    refused = [r for r in caplog.records if r.getMessage() == "message not sent: over the outbound budget"]
    assert [(r.limit, r.purpose, r.channel) for r in refused] == [("messages_per_destination", "notice", "email")]  # type: ignore[attr-defined]


def test_the_gate_sends_charges_once_and_refunds_a_provider_failure(org: Org) -> None:
    reconfigure(BUDGET_MESSAGES_PER_DESTINATION="1")
    sent: list[str] = []

    def failing() -> DeliveryResult:
        sent.append("try")
        return DeliveryResult.provider_failed("email", "SES_Throttling", "throttled")

    def working() -> DeliveryResult:
        sent.append("sent")
        return DeliveryResult.delivered("email", "m-1")

    where = {"channel": "email", "destination": "ops@x.io", "purpose": "notice", "organization_id": org.organization_id}
    assert not send_within_budget(**where, now=NOW, deliver=failing, settings=get_settings()).sent  # type: ignore[arg-type]
    assert send_within_budget(**where, now=NOW, deliver=working, settings=get_settings()).sent  # type: ignore[arg-type]
    refused = send_within_budget(**where, now=NOW, deliver=working, settings=get_settings())  # type: ignore[arg-type]
    assert (refused.sent, refused.over_budget, refused.error_code) == (False, True, "OVER_BUDGET")
    assert refused.retry_after is not None and refused.retry_after > 0
    assert sent == ["try", "sent"]
    # A request that charged already passes without a second charge.
    assert send_within_budget(**where, now=NOW, deliver=working, charged=True, settings=get_settings()).sent  # type: ignore[arg-type]
