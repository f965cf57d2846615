"""Schedules on moto: CRUD, validation against the directory, optimistic locking, overrides, shifts,
and the calendar feed found by its token."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.directory import teams, users
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.escalation import Level, Target
from chalicelib.escalation import service as policies
from chalicelib.oncall import Layer, Restriction, feed
from chalicelib.oncall import service as schedules
from chalicelib.oncall.tables import ScheduleRecord
from chalicelib.settings import get_settings
from tests.conftest import NOW

MONDAY = datetime(2026, 11, 16, 8, 0, tzinfo=UTC)  # 09:00 in Europe/Berlin


def fields_of(error: ValidationFailed) -> dict[str, str]:
    assert error.details is not None
    return {item["field"]: item["message"] for item in error.details["fields"]}


@pytest.fixture
def people(org):
    oid = org.organization_id
    made = {
        name: users.create_user(organization_id=oid, name=name.title(), email=f"{name}@example.com", now=NOW)
        for name in ("alice", "bob", "carol")
    }
    return {name: user.user_id for name, user in made.items()}


def weekly(people, **changes):
    values = {
        "layer_id": "lyr_week",
        "name": "Weekly",
        "members": (people["alice"], people["bob"]),
        "rotation": "weekly",
        "handoff_time": "09:00",
        "start": MONDAY,
    }
    values.update(changes)
    return Layer(**values)


def business_hours(people):
    return Layer(
        "lyr_day",
        "Business hours",
        (people["carol"],),
        "daily",
        "09:00",
        MONDAY,
        restrictions=(Restriction.daily("09:00", "17:00"),),
    )


def make(org, people, **changes):
    values = {
        "organization_id": org.organization_id,
        "name": "Payments primary",
        "time_zone": "Europe/Berlin",
        "layers": [weekly(people), business_hours(people)],
        "now": NOW,
    }
    values.update(changes)
    return schedules.create_schedule(**values)


def test_create_get_list_and_delete(org, people):
    oid = org.organization_id
    team = teams.create_team(organization_id=oid, name="Payments", now=NOW)
    created = make(org, people, name="  Payments   primary ", team_id=team.team_id)
    assert created.schedule_id.startswith("sch_")
    assert created.schedule.name == "Payments primary"
    assert created.schedule.team_id == team.team_id
    assert [layer.layer_id for layer in created.schedule.layers] == ["lyr_week", "lyr_day"]
    assert created.version == 1
    assert created.created_at == NOW
    assert len(created.ical_token) >= 40

    got = schedules.get_schedule(organization_id=oid, schedule_id=created.schedule_id)
    assert got == created
    later = make(org, people, name="Search", now=NOW + timedelta(minutes=1))
    assert [s.schedule_id for s in schedules.list_schedules(organization_id=oid)] == [
        later.schedule_id,
        created.schedule_id,
    ]
    assert [s.schedule_id for s in schedules.list_schedules(organization_id=oid, team_id=team.team_id)] == [
        created.schedule_id
    ]
    assert schedules.get_schedules(organization_id=oid, schedule_ids=[later.schedule_id, "sch_nope", "../x"]) == {
        later.schedule_id: later
    }

    schedules.delete_schedule(
        organization_id=oid,
        schedule_id=created.schedule_id,
        used_by_policies=policies.policies_using_schedule(organization_id=oid, schedule_id=created.schedule_id),
    )
    with pytest.raises(NotFound):
        schedules.get_schedule(organization_id=oid, schedule_id=created.schedule_id)
    with pytest.raises(NotFound):
        schedules.delete_schedule(
            organization_id=oid,
            schedule_id=created.schedule_id,
            used_by_policies=policies.policies_using_schedule(organization_id=oid, schedule_id=created.schedule_id),
        )


def test_schedules_are_per_organization(org, people):
    from tests.conftest import make_org

    created = make(org, people)
    other = make_org("Other").organization_id
    with pytest.raises(NotFound):
        schedules.get_schedule(organization_id=other, schedule_id=created.schedule_id)
    assert schedules.list_schedules(organization_id=other) == []


def test_validation_names_every_problem(org, people):
    with pytest.raises(ValidationFailed) as caught:
        make(org, people, time_zone="Mars/Olympus", layers=[weekly(people, handoff_time="25:00", members=())])
    problems = fields_of(caught.value)
    assert set(problems) == {"time_zone", "layers.0.handoff_time", "layers.0.members"}


def test_members_team_and_override_users_must_exist_and_be_active(org, people):
    oid = org.organization_id
    with pytest.raises(ValidationFailed) as caught:
        make(org, people, layers=[weekly(people, members=(people["alice"], "usr_ghost"))])
    assert fields_of(caught.value) == {"layers.0.members.1": "no such user in this organization"}

    users.update_user(organization_id=oid, user_id=people["bob"], now=NOW, is_active=False)
    with pytest.raises(ValidationFailed) as caught:
        make(org, people)
    assert fields_of(caught.value) == {"layers.0.members.1": "the user is deactivated"}

    with pytest.raises(ValidationFailed) as caught:
        make(org, people, layers=[business_hours(people)], team_id="team-ghost")
    assert fields_of(caught.value) == {"team_id": "no such team in this organization"}

    created = make(org, people, layers=[business_hours(people)])
    with pytest.raises(ValidationFailed) as caught:
        schedules.add_override(
            organization_id=oid,
            schedule_id=created.schedule_id,
            user_id=people["bob"],
            start=NOW,
            end=NOW + timedelta(hours=1),
            now=NOW,
        )
    assert fields_of(caught.value) == {"user_id": "the user is deactivated"}


def test_update_changes_only_what_is_given_and_bumps_the_version(org, people):
    oid = org.organization_id
    created = make(org, people)
    later = NOW + timedelta(hours=1)
    updated = schedules.update_schedule(
        organization_id=oid, schedule_id=created.schedule_id, now=later, name="Renamed", time_zone="America/New_York"
    )
    assert (updated.schedule.name, updated.schedule.time_zone, updated.version) == ("Renamed", "America/New_York", 2)
    assert updated.schedule.layers == created.schedule.layers
    assert updated.updated_at == later
    assert updated.ical_token == created.ical_token

    relayered = schedules.update_schedule(
        organization_id=oid,
        schedule_id=created.schedule_id,
        now=later,
        expected_version=2,
        layers=[weekly(people, members=(people["carol"],))],
    )
    assert [layer.members for layer in relayered.schedule.layers] == [(people["carol"],)]
    assert relayered.version == 3

    with pytest.raises(ValidationFailed):
        schedules.update_schedule(organization_id=oid, schedule_id=created.schedule_id, now=later, time_zone="Nowhere")
    with pytest.raises(NotFound):
        schedules.update_schedule(organization_id=oid, schedule_id="sch_missing", now=later, name="x")


def test_a_stale_version_is_a_conflict(org, people):
    oid = org.organization_id
    created = make(org, people)
    schedules.update_schedule(
        organization_id=oid, schedule_id=created.schedule_id, now=NOW, expected_version=1, name="First"
    )
    with pytest.raises(Conflict) as caught:
        schedules.update_schedule(
            organization_id=oid, schedule_id=created.schedule_id, now=NOW, expected_version=1, name="Second"
        )
    assert caught.value.details == {"expected_version": 1, "current_version": 2}
    assert schedules.get_schedule(organization_id=oid, schedule_id=created.schedule_id).schedule.name == "First"


def test_a_write_racing_between_read_and_save_is_retried_or_refused(org, people, monkeypatch):
    """Someone else saves between our read and our conditional write: without a version we re-read
    and reapply (both changes land); with one, it is a 409."""
    oid = org.organization_id
    created = make(org, people)
    original = schedules.get_record
    raced = {"done": False}

    def racing_get_record(organization_id, schedule_id, *, consistent=False):
        record = original(organization_id, schedule_id, consistent=consistent)
        if consistent and not raced["done"]:
            raced["done"] = True
            other = original(organization_id, schedule_id, consistent=True)
            other.time_zone = "Asia/Tokyo"
            other.save()
        return record

    monkeypatch.setattr(schedules, "get_record", racing_get_record)
    updated = schedules.update_schedule(organization_id=oid, schedule_id=created.schedule_id, now=NOW, name="Mine")
    assert (updated.schedule.name, updated.schedule.time_zone, updated.version) == ("Mine", "Asia/Tokyo", 3)

    raced["done"] = False
    with pytest.raises(Conflict):
        schedules.update_schedule(
            organization_id=oid, schedule_id=created.schedule_id, now=NOW, expected_version=3, name="Lost"
        )


def test_overrides_win_and_can_be_removed(org, people):
    oid = org.organization_id
    created = make(org, people)
    start, end = NOW - timedelta(hours=1), NOW + timedelta(hours=2)
    stored, override = schedules.add_override(
        organization_id=oid, schedule_id=created.schedule_id, user_id=people["bob"], start=start, end=end, now=NOW
    )
    assert override.override_id.startswith("ovr_")
    assert stored.schedule.overrides == (override,)
    assert stored.version == 2

    result = schedules.schedule_shifts(organization_id=oid, schedule_id=created.schedule_id, since=start, until=end)
    assert [(s.user_id, s.source, s.override_id) for s in result.shifts] == [
        (people["bob"], "override", override.override_id)
    ]
    assert result.users[people["bob"]].name == "Bob"

    removed = schedules.remove_override(
        organization_id=oid, schedule_id=created.schedule_id, override_id=override.override_id, now=NOW
    )
    assert removed.schedule.overrides == ()
    result = schedules.schedule_shifts(organization_id=oid, schedule_id=created.schedule_id, since=start, until=end)
    assert {(s.user_id, s.layer_id) for s in result.shifts} == {(people["carol"], "lyr_day")}
    with pytest.raises(NotFound):
        schedules.remove_override(
            organization_id=oid, schedule_id=created.schedule_id, override_id=override.override_id, now=NOW
        )


def test_override_validation_and_pruning(org, people):
    oid = org.organization_id
    created = make(org, people)
    with pytest.raises(ValidationFailed) as caught:
        schedules.add_override(
            organization_id=oid, schedule_id=created.schedule_id, user_id=people["bob"], start=NOW, end=NOW, now=NOW
        )
    assert fields_of(caught.value) == {"end": "must be after start"}
    with pytest.raises(NotFound):
        schedules.add_override(
            organization_id=oid,
            schedule_id="sch_missing",
            user_id=people["bob"],
            start=NOW,
            end=NOW + timedelta(hours=1),
            now=NOW,
        )
    # An override that ended 40 days ago is refused; one that ended 20 days ago is kept until it is
    # more than 30 days old, then the next write drops it.
    with pytest.raises(ValidationFailed):
        schedules.add_override(
            organization_id=oid,
            schedule_id=created.schedule_id,
            user_id=people["bob"],
            start=NOW - timedelta(days=41),
            end=NOW - timedelta(days=40),
            now=NOW,
        )
    _, old = schedules.add_override(
        organization_id=oid,
        schedule_id=created.schedule_id,
        user_id=people["bob"],
        start=NOW - timedelta(days=21),
        end=NOW - timedelta(days=20),
        now=NOW,
    )
    later = NOW + timedelta(days=11)
    stored, new = schedules.add_override(
        organization_id=oid,
        schedule_id=created.schedule_id,
        user_id=people["alice"],
        start=later,
        end=later + timedelta(hours=1),
        now=later,
    )
    assert [o.override_id for o in stored.schedule.overrides] == [new.override_id]
    assert old.override_id not in {o.override_id for o in stored.schedule.overrides}


def test_shifts_window_is_bounded(org, people):
    oid = org.organization_id
    created = make(org, people)
    for since, until in ((NOW, NOW), (NOW, NOW - timedelta(hours=1)), (NOW, NOW + timedelta(days=94))):
        with pytest.raises(ValidationFailed):
            schedules.schedule_shifts(organization_id=oid, schedule_id=created.schedule_id, since=since, until=until)
    result = schedules.schedule_shifts(
        organization_id=oid, schedule_id=created.schedule_id, since=NOW, until=NOW + timedelta(days=93)
    )
    assert result.shifts[0].start == NOW and result.shifts[-1].end == NOW + timedelta(days=93)
    with pytest.raises(NotFound):
        schedules.schedule_shifts(organization_id=oid, schedule_id="sch_missing", since=NOW, until=NOW + timedelta(1))


def test_calendar_feed_by_token_and_rotation(org, people):
    oid = org.organization_id
    created = make(org, people)
    url = feed.ical_url(organization_id=oid, schedule_id=created.schedule_id, settings=get_settings())
    assert url == f"http://127.0.0.1:8000/calendars/{created.ical_token}.ics"

    text = feed.ical_feed(token=created.ical_token, now=NOW, settings=get_settings())
    assert text.startswith("BEGIN:VCALENDAR\r\n") and text.endswith("END:VCALENDAR\r\n")
    assert "X-WR-CALNAME:Payments primary" in text
    assert "X-WR-TIMEZONE:Europe/Berlin" in text
    assert "SUMMARY:On call: Carol" in text and "SUMMARY:On call: Alice" in text
    assert "DTSTART:20261122T080000Z" in text  # Sunday 09:00 Berlin, Carol's business-hours shift

    for token in ("unknown-token-0123456789abcdef", "short", "bad token with spaces and more", "x" * 200):
        with pytest.raises(NotFound):
            feed.ical_feed(token=token, now=NOW, settings=get_settings())

    new_url = feed.rotate_ical_token(
        organization_id=oid, schedule_id=created.schedule_id, now=NOW, settings=get_settings()
    )
    assert new_url != url
    with pytest.raises(NotFound):
        feed.ical_feed(token=created.ical_token, now=NOW, settings=get_settings())
    new_token = new_url.rsplit("/", 1)[1].removesuffix(".ics")
    assert feed.ical_feed(token=new_token, now=NOW, settings=get_settings()).startswith("BEGIN:VCALENDAR")


def test_deleting_a_schedule_a_policy_targets_is_a_conflict(org, people):
    oid = org.organization_id
    created = make(org, people)
    policy = policies.create_policy(
        organization_id=oid, name="Payments", levels=[Level((Target("schedule", created.schedule_id),), 5)], now=NOW
    )
    with pytest.raises(Conflict) as caught:
        schedules.delete_schedule(
            organization_id=oid,
            schedule_id=created.schedule_id,
            used_by_policies=policies.policies_using_schedule(organization_id=oid, schedule_id=created.schedule_id),
        )
    assert caught.value.details == {"policy_ids": [policy.policy_id]}
    policies.update_policy(
        organization_id=oid, policy_id=policy.policy_id, now=NOW, levels=[Level((Target("user", people["bob"]),), 5)]
    )
    schedules.delete_schedule(
        organization_id=oid,
        schedule_id=created.schedule_id,
        used_by_policies=policies.policies_using_schedule(organization_id=oid, schedule_id=created.schedule_id),
    )


def test_stored_json_round_trips(org, people):
    created = make(org, people)
    record = ScheduleRecord.get(org.organization_id, created.schedule_id)
    assert record.layers[1]["restrictions"] == [{"kind": "daily", "start": "09:00", "end": "17:00"}]
    assert schedules.to_domain(record).schedule == created.schedule
