"""The pager tells the rollups what it sent: a page and a later notification-rule step each leave
one `notification.page_sent` message, which the insights consumer counts once for the person."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from chalicelib.insights import handlers, rollups
from chalicelib.insights.tables import RollupRecord
from chalicelib.paging import reach
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.service.test_escalation_runtime import drain

# The paging fixtures (a person with SMS now and voice after five minutes), re-exported for pytest.
from tests.service.test_paging_rules import ada as ada
from tests.service.test_paging_rules import open_incident, run_step
from tests.service.test_paging_rules import providers as providers
from tests.service.test_paging_rules import sqs as sqs


def test_a_page_and_its_later_step_are_counted_for_the_person(org: Org, ada: dict[str, Any]) -> None:
    _, left = open_incident(org, ada, "SEV1")
    sent = [m for m in left if m.message_type == reach.PAGE_SENT]
    (page,) = sent
    assert (page.payload["channels"], page.payload["urgency"], page.payload["failed_channels"]) == (["sms"], "high", [])
    (step,) = [m for m in left if m.message_type == reach.RULE_STEP]
    run_step(step, timedelta(minutes=5))
    (later,) = [m for m in drain() if m.message_type == reach.PAGE_SENT]
    assert later.payload["channels"] == ["voice"] and later.payload["delivery_id"] != page.payload["delivery_id"]
    assert later.payload["user_id"] == page.payload["user_id"]
    for message in (page, later, page):  # the first one redelivered
        handlers.on_paged(message, get_settings())
    partition = rollups.partition(org.organization_id, rollups.PERSON, NOW)
    [item] = [record.counters() for record in RollupRecord.query(partition)]
    assert item == {"pages": 2, "page_u_high": 2, "page_sms": 1, "page_voice": 1}
