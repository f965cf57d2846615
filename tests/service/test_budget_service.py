"""Spending the outbound budget on moto: up to each limit and no further, however sends race;
refunds; the sliding window across a boundary; an owner's lower limit and an operator's higher one."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.budget import organization_limits
from chalicelib.budget import service as budget
from chalicelib.budget.rules import Send
from chalicelib.errors import NotFound, RateLimited, ValidationFailed
from chalicelib.ratelimit.tables import RateLimitWindowRecord
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, reconfigure
from tests.service.test_contact_service import _race

PHONE = "+15550100001"


def code_to(org: Org, phone: str = PHONE, user: str = "u1") -> Send:
    return Send("sms", phone, "verification", org.organization_id, user)


def test_three_codes_to_a_number_then_a_refusal_naming_the_limit(org: Org) -> None:
    assert [
        budget.spend(code_to(org), NOW + timedelta(seconds=n), settings=get_settings()).allowed for n in range(4)
    ] == [
        True,
        True,
        True,
        False,
    ]
    refused = budget.spend(code_to(org, user="u2"), NOW + timedelta(minutes=1), settings=get_settings()).refusal
    assert refused is not None and refused.limit == "verification_per_destination" and refused.value == 3
    # The first three came at the top of the hour: room again once a third of the hour has slid
    # into the next one (the sliding count, rounded up, charges the rest).
    assert refused.retry_after == 3600 - 60 + 1200
    assert "At most 3 verification codes sent to one phone number an hour" in refused.message
    error = refused.error()
    assert error.status == 429 and error.headers == {"Retry-After": str(refused.retry_after)}
    assert error.details == {"limit": "verification_per_destination", "value": 3, "retry_after_seconds": 4740}


def test_a_refusal_charges_nothing_and_the_broader_counters_are_given_back(org: Org) -> None:
    for n in range(5):  # five numbers: the person's limit (5 an hour) is spent, each number's is not
        assert budget.spend(code_to(org, f"+1555010000{n}"), NOW, settings=get_settings()).allowed
    refused = budget.spend(code_to(org, "+15550100009"), NOW, settings=get_settings()).refusal
    assert refused is not None and refused.limit == "verification_per_person"
    # The new number's own counter was charged first and given back: a code to it from someone
    # else still goes, three times.
    assert [
        budget.spend(code_to(org, "+15550100009", user="u2"), NOW, settings=get_settings()).allowed for _ in range(4)
    ] == [
        True,
        True,
        True,
        False,
    ]
    organization = RateLimitWindowRecord.get(f"outbound#sms_per_organization#{org.organization_id}#{_hour(NOW)}")
    assert int(organization.hits) == 8  # 5 + 3: the refused sends spent nothing here


def test_racing_sends_never_pass_the_limit(org: Org) -> None:
    results, errors = _race(12, lambda _: budget.spend(code_to(org), NOW, settings=get_settings()).allowed)
    assert errors == [] and results.count(True) == 3 and results.count(False) == 9
    stored = RateLimitWindowRecord.get(f"outbound#verification_per_destination#phone:{PHONE}#{_hour(NOW)}")
    assert int(stored.hits) == 3


def test_a_refund_gives_the_charge_back(org: Org) -> None:
    first = budget.spend(code_to(org), NOW, settings=get_settings())
    first.refund()
    first.refund()  # twice is once
    assert [budget.spend(code_to(org), NOW, settings=get_settings()).allowed for _ in range(4)] == [
        True,
        True,
        True,
        False,
    ]


def test_the_window_slides_a_boundary_does_not_double_the_limit(org: Org) -> None:
    late = NOW + timedelta(minutes=59)
    assert all(budget.spend(code_to(org), late, settings=get_settings()).allowed for _ in range(3))
    next_hour = NOW + timedelta(minutes=61)  # fixed windows alone would allow three more here
    assert not budget.spend(code_to(org), next_hour, settings=get_settings()).allowed
    # A third into the next hour, the sliding count (the last hour's three, weighted by the two
    # thirds of it still covered, rounded up) leaves room for one.
    assert not budget.spend(code_to(org), NOW + timedelta(minutes=60 + 19), settings=get_settings()).allowed
    assert budget.spend(code_to(org), NOW + timedelta(minutes=60 + 21), settings=get_settings()).allowed
    assert not budget.spend(code_to(org), NOW + timedelta(minutes=60 + 22), settings=get_settings()).allowed


def test_an_owner_lowers_a_limit_for_their_organization_only(org: Org) -> None:
    other = Send("sms", PHONE, "page", "another-org", "u1")
    views = organization_limits.lower(
        organization_id=org.organization_id, changes={"page_burst_per_person": 2}, settings=get_settings()
    )
    lowered = {view.limit.name: (view.value, view.deployment_value, view.lowered) for view in views}
    assert lowered["page_burst_per_person"] == (2, 5, True)
    assert lowered["sms_per_organization"] == (1000, 1000, False)
    page = Send("sms", PHONE, "page", org.organization_id, "u1")
    assert [budget.spend(page, NOW, settings=get_settings()).allowed for _ in range(3)] == [True, True, False]
    assert [budget.spend(other, NOW, settings=get_settings()).allowed for _ in range(6)] == [True] * 5 + [False]
    organization_limits.lower(
        organization_id=org.organization_id, changes={"page_burst_per_person": None}, settings=get_settings()
    )
    assert organization_limits.lowered(org.organization_id) == {}
    assert budget.spend(page, NOW, settings=get_settings()).allowed  # back to the deployment's 5


def test_an_owner_cannot_raise_and_an_operator_can(org: Org) -> None:
    with pytest.raises(ValidationFailed):
        organization_limits.lower(
            organization_id=org.organization_id, changes={"page_burst_per_person": 6}, settings=get_settings()
        )
    with pytest.raises(NotFound):
        organization_limits.lower(
            organization_id="no-such-org", changes={"page_burst_per_person": 2}, settings=get_settings()
        )
    reconfigure(BUDGET_PAGE_BURST_PER_PERSON="8")
    organization_limits.lower(
        organization_id=org.organization_id, changes={"page_burst_per_person": 6}, settings=get_settings()
    )
    page = Send("sms", PHONE, "page", org.organization_id, "u1")
    assert [budget.spend(page, NOW, settings=get_settings()).allowed for _ in range(7)] == [True] * 6 + [False]
    reconfigure(BUDGET_PAGE_BURST_PER_PERSON="4")  # an operator's lower value wins over the owner's
    assert organization_limits.in_effect(org.organization_id, settings=get_settings())["page_burst_per_person"] == 4


def test_a_request_that_spends_past_a_limit_answers_429(org: Org) -> None:
    for _ in range(3):
        budget.spend_or_raise(code_to(org), NOW, settings=get_settings())
    with pytest.raises(RateLimited) as refused:
        budget.spend_or_raise(code_to(org), NOW, settings=get_settings())
    assert refused.value.details["limit"] == "verification_per_destination"


def _hour(moment: object) -> int:
    from datetime import datetime

    assert isinstance(moment, datetime)
    return int(moment.timestamp() // 3600) * 3600
