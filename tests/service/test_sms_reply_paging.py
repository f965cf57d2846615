"""An SMS page answered by SMS, end to end on moto: the page leaves what the reply refers to, the
reply acknowledges as the API would (timeline names SMS, the pending call step sends nothing) and
the answer is texted back through SNS."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from chalicelib import clock
from chalicelib.paging import reach
from chalicelib.paging.sms_reply import InboundSms, handle_inbound
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.service.test_paging_rules import ADA_PHONE, open_incident, run_step, sent_sms, timeline_titles

# Fixtures of test_paging_rules, re-exported so pytest finds them here.
from tests.service.test_paging_rules import ada as ada
from tests.service.test_paging_rules import providers as providers
from tests.service.test_paging_rules import sqs as sqs


def test_replying_4_to_the_page_acknowledges_and_stops_the_call(org: Org, ada: dict[str, Any]) -> None:
    number, left = open_incident(org, ada, "SEV1")
    (step,) = [m for m in left if m.message_type == reach.RULE_STEP]
    at = NOW + timedelta(minutes=2)
    with clock.frozen(at):
        answer = handle_inbound(InboundSms("in-1", ADA_PHONE, "4"), at, settings=get_settings())
    assert answer == f"{number} acknowledged by ada@acme.test."
    assert sent_sms()[-1] == (ADA_PHONE, answer)
    assert "Acknowledged by ada@acme.test via SMS" in timeline_titles(org, number)
    run_step(step, timedelta(minutes=5))
    assert ada["twilio"].requests == []  # the call step found the incident acknowledged
