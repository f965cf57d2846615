"""The coverage check on moto: a schedule or policy that pages nobody for a while ahead tells its
owners once per gap; an edit, time passing and a deleted schedule; who the owners are."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.directory import teams
from chalicelib.local import outbox
from chalicelib.oncall import Layer, Restriction
from chalicelib.oncall import service as schedules
from chalicelib.oncall.coverage_watch import CHECK_EVERY
from chalicelib.oncall.tables import CoverageWatchRecord
from chalicelib.paging import coverage_check, coverage_notices
from chalicelib.queue.messages import Message
from chalicelib.settings import get_settings
from chalicelib.workers import scheduled
from tests.conftest import NOW, Org
from tests.kit import factories as make

# NOW is Sunday 2026-11-22 12:00Z. The schedule covers 09:00-17:00 UTC every day.
DAY_ONLY = (Restriction.daily("09:00", "17:00"),)


@pytest.fixture
def frozen(aws_env: None) -> Iterator[None]:
    with clock.frozen(NOW):
        yield


@pytest.fixture
def sent(monkeypatch: Any) -> list[Message]:
    found: list[Message] = []
    monkeypatch.setattr(coverage_check, "publish", lambda message, delay_seconds=0: found.append(message))
    return found


@pytest.fixture
def world(org: Org, frozen: None) -> dict[str, Any]:
    owner = make.person(org, "Olga", role="owner")
    admin = make.person(org, "Adam", role="admin")
    ana = make.person(org, "Ana")
    layer = Layer("lyr_day", "Days", (ana.user_id,), "daily", "09:00", NOW - timedelta(days=7), restrictions=DAY_ONLY)
    stored = schedules.create_schedule(
        organization_id=org.organization_id, name="Days", time_zone="UTC", layers=[layer], now=NOW
    )
    return {"org": org, "owner": owner, "admin": admin, "ana": ana, "schedule_id": stored.schedule_id, "layer": layer}


def check(at: datetime = NOW) -> coverage_check.CoverageRun:
    return coverage_check.check_due(now=at)


def gaps_of(message: Message) -> list[list[str]]:
    return list(message.payload["gaps"])


def test_the_owners_are_told_of_every_gap_once(world: dict[str, Any], sent: list[Message]) -> None:
    run = check()
    assert (run.checked, run.failed) == (1, 0)
    assert sorted(m.payload["user_id"] for m in sent) == sorted([world["owner"].user_id, world["admin"].user_id])
    first = sent[0]
    assert (first.message_type, first.payload["kind"], first.payload["name"]) == (
        "oncall.coverage_notice",
        "schedule",
        "Days",
    )
    # Every night of the next 14 days, the first from 17:00 today.
    assert gaps_of(first)[0] == ["2026-11-22T17:00:00.000Z", "2026-11-23T09:00:00.000Z"]
    assert len(gaps_of(first)) == 14
    sent.clear()
    assert check().checked == 0  # nothing due: the next look is CHECK_EVERY later
    organization_id, schedule_id = world["org"].organization_id, world["schedule_id"]
    schedules.update_schedule(organization_id=organization_id, schedule_id=schedule_id, now=NOW, name="Day shift")
    assert check().checked == 1 and sent == []  # looked at again after the edit: the same gaps, nobody told again
    later = check(NOW + CHECK_EVERY)  # the horizon moved on 6 hours: the night of 6 December begins in it
    assert later.checked == 1
    assert {tuple(map(tuple, gaps_of(m))) for m in sent} == {
        (("2026-12-06T17:00:00.000Z", "2026-12-06T18:00:00.000Z"),)
    }


def test_a_new_night_entering_the_horizon_is_told_alone(world: dict[str, Any], sent: list[Message]) -> None:
    check()
    sent.clear()
    check(NOW + timedelta(days=1))  # the gap on now began yesterday 17:00: still the same, not told again
    [night] = {tuple(map(tuple, gaps_of(m))) for m in sent}
    assert night == (("2026-12-06T17:00:00.000Z", "2026-12-07T09:00:00.000Z"),)
    sent.clear()
    check(NOW + timedelta(days=3))  # days later: the gaps told before are carried, only new nights are told
    assert {tuple(map(tuple, gaps_of(m))) for m in sent} == {
        (
            ("2026-12-07T17:00:00.000Z", "2026-12-08T09:00:00.000Z"),
            ("2026-12-08T17:00:00.000Z", "2026-12-09T09:00:00.000Z"),
        )
    }


def test_an_edit_that_fills_a_gap_and_opens_another(world: dict[str, Any], sent: list[Message]) -> None:
    check()
    sent.clear()
    # Cover tonight by an override, but end the layer on Friday: the weekend is one long new gap.
    organization_id, schedule_id = world["org"].organization_id, world["schedule_id"]
    schedules.add_override(
        organization_id=organization_id,
        schedule_id=schedule_id,
        user_id=world["ana"].user_id,
        start=NOW,
        end=NOW + timedelta(days=1),
        now=NOW,
    )
    watch = CoverageWatchRecord.get(organization_id, f"schedule#{schedule_id}")
    assert watch.check_at == NOW  # the write marked it due
    check()
    assert sent == []  # no new gap
    ended = Layer(**{**world["layer"].__dict__, "end": datetime.fromisoformat("2026-11-27T12:00:00+00:00")})
    schedules.update_schedule(organization_id=organization_id, schedule_id=schedule_id, now=NOW, layers=[ended])
    check()
    [gaps] = {tuple(map(tuple, gaps_of(m))) for m in sent}
    assert gaps == (("2026-11-27T12:00:00.000Z", "2026-12-06T12:00:00.000Z"),)


def test_the_policy_targeting_the_schedule_is_checked_next_with_its_levels(
    world: dict[str, Any], sent: list[Message]
) -> None:
    stored = schedules.get_schedule(organization_id=world["org"].organization_id, schedule_id=world["schedule_id"])
    make.policy(world["org"], stored, world["admin"], name="Checkout")
    check()
    policy_notices = [m for m in sent if m.payload["kind"] == "policy"]
    assert {m.payload["name"] for m in policy_notices} == {"Checkout"}
    assert all(levels == [1] for m in policy_notices for levels in m.payload["levels"])
    assert len(gaps_of(policy_notices[0])) == 14


def test_the_schedules_team_owners_are_told_else_the_organizations(world: dict[str, Any], sent: list[Message]) -> None:
    organization_id = world["org"].organization_id
    team = teams.create_team(
        organization_id=organization_id,
        name="Payments",
        now=NOW,
        member_ids=[world["admin"].user_id, world["ana"].user_id],
    )
    schedules.update_schedule(
        organization_id=organization_id, schedule_id=world["schedule_id"], now=NOW, team_id=team.team_id
    )
    check()
    assert {m.payload["user_id"] for m in sent} == {world["admin"].user_id}


def test_a_deleted_schedule_is_forgotten(world: dict[str, Any], sent: list[Message]) -> None:
    organization_id = world["org"].organization_id
    schedules.delete_schedule(organization_id=organization_id, schedule_id=world["schedule_id"], used_by_policies=[])
    assert check().checked == 0
    with pytest.raises(CoverageWatchRecord.DoesNotExist):
        CoverageWatchRecord.get(organization_id, f"schedule#{world['schedule_id']}")


def test_the_notice_goes_out_once_per_person(world: dict[str, Any], sent: list[Message]) -> None:
    check()
    message = next(m for m in sent if m.payload["user_id"] == world["owner"].user_id)
    coverage_notices.on_coverage_notice(message, get_settings())
    coverage_notices.on_coverage_notice(message, get_settings())  # redelivered
    [email] = outbox.list_outbox(channel="email", to=world["owner"].email)
    assert email.subject == "Nobody to page: schedule Days has 14 coverage gaps from Sun 22 Nov 17:00"
    assert "- Sun 22 Nov 2026 17:00 UTC to Mon 23 Nov 2026 09:00 UTC" in email.text


def test_the_scheduled_entry_point(world: dict[str, Any], sent: list[Message]) -> None:
    assert scheduled.check_coverage({"detail-type": "Scheduled Event"}) == {
        "checked": 1,
        "notices": 2,
        "lost": 0,
        "failed": 0,
    }
