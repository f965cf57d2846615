"""A translated schedule gives the vendor's on-call person at every half hour of the next four
weeks: Tocsin's own rotation engine (chalicelib.oncall.rotation) on the imported layers against
the vendors' semantics written apart (tests.importers.vendor_oncall), on the whole test account
(weekly layers started before the last DST change, daily, 12-hour, two-week and two-day turns,
restricted nights, weekends and business hours, a layer starting later between handoffs, one
ending, one ended, overrides)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.oncall import rotation
from tests.importers import harness, vendor_oncall

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
WEEKS = 4


def instants(now: datetime) -> list[datetime]:
    step, moment, found = timedelta(minutes=30), now + timedelta(minutes=7), []
    while moment < now + timedelta(weeks=WEEKS):
        found.append(moment)
        moment += step
    return found


def tocsin_answers(schedule, now: datetime):  # type: ignore[no-untyped-def]
    shifts = rotation.final_shifts(harness.tocsin_schedule(schedule), now, now + timedelta(weeks=WEEKS))
    return lambda moment: next((s.user_id for s in shifts if s.start <= moment < s.end), None)


@pytest.mark.parametrize("now", [NOW, datetime(2026, 3, 20, 8, 30, tzinfo=UTC), datetime(2027, 6, 1, tzinfo=UTC)])
@pytest.mark.parametrize("calendar", [True, False], ids=["calendar-days", "elapsed-days"])
def test_pagerduty_on_call_matches_at_every_half_hour(now: datetime, calendar: bool) -> None:
    """Also for a PagerDuty that counted whole days in elapsed time: the importer reads which
    count its final schedule shows, layer by layer."""
    account, served = harness.pagerduty_read(now)
    harness.with_final(account, served, now, now + timedelta(weeks=5), calendar=calendar)
    translation = harness.translate_pagerduty(account, now)
    emails = {user["id"]: user["email"] for user in served["users"]}
    assert len(translation.document.schedules or []) == 10
    for raw, schedule in zip(served["schedules"], translation.document.schedules or [], strict=True):
        tocsin = tocsin_answers(schedule, now)
        overrides = served["overrides"][raw["id"]]
        wrong = [
            (moment, who, tocsin(moment))
            for moment in instants(now)
            if emails.get(who := vendor_oncall.pd_on_call(raw, overrides, moment, calendar=calendar) or "")
            != tocsin(moment)
        ]
        assert wrong == [], f"{schedule.name}: {wrong[:3]}"


@pytest.mark.parametrize("now", [NOW, datetime(2027, 4, 2, 9, 0, tzinfo=UTC)])
def test_opsgenie_on_call_is_one_of_the_vendors_at_every_half_hour(now: datetime) -> None:
    """Opsgenie puts every rotation's person on call at once; Tocsin's one person is one of them,
    and nobody is on call exactly when Opsgenie has nobody."""
    account, served = harness.opsgenie_read(now)
    translation = harness.translate_opsgenie(account, now)
    alone = 0
    for raw, schedule in zip(served["schedules"], translation.document.schedules or [], strict=True):
        tocsin = tocsin_answers(schedule, now)
        for moment in instants(now):
            vendor = vendor_oncall.og_on_call(raw, served["overrides"][raw["id"]], moment)
            alone += len(vendor) == 1
            assert (tocsin(moment) in vendor) if vendor else tocsin(moment) is None, (schedule.name, moment, vendor)
    assert alone > 1000  # the comparison is exact wherever Opsgenie has one person
