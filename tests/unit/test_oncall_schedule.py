"""The schedule model: dataclasses, to_dict/from_dict round trips, validation with details.fields."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from chalicelib.errors import ValidationFailed
from chalicelib.oncall import Layer, Override, Restriction, Schedule, validate_override, validate_schedule
from chalicelib.oncall.fields import format_moment, parse_moment
from chalicelib.oncall.schedule import CUSTOM_HOURS_MAX, MAX_LAYERS, MAX_MEMBERS
from chalicelib.oncall.wallclock import is_valid_zone, minutes_of, parse_hhmm

T0 = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)


def layer(**changes: Any) -> Layer:
    values: dict[str, Any] = {
        "layer_id": "lyr_primary",
        "name": "Primary",
        "members": ("usr_a", "usr_b"),
        "rotation": "daily",
        "handoff_time": "09:00",
        "start": T0,
    }
    values.update(changes)
    return Layer(**values)


def schedule(**changes: Any) -> Schedule:
    values: dict[str, Any] = {
        "schedule_id": "sch_1",
        "name": "Payments primary",
        "time_zone": "America/New_York",
        "layers": (layer(),),
    }
    values.update(changes)
    return Schedule(**values)


def fields_of(error: ValidationFailed) -> dict[str, str]:
    assert error.details is not None
    return {item["field"]: item["message"] for item in error.details["fields"]}


def invalid_fields(candidate: Schedule) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as caught:
        validate_schedule(candidate)
    assert caught.value.code == "VALIDATION_ERROR" and caught.value.status == 400
    return fields_of(caught.value)


FULL = schedule(
    team_id="team_payments",
    layers=(
        layer(end=T0 + timedelta(days=90), restrictions=(Restriction.daily("22:00", "06:00"),)),
        layer(
            layer_id="lyr_custom",
            name="Follow the sun",
            members=("usr_c",),
            rotation="custom",
            rotation_hours=12,
            handoff_time="07:30",
            start=datetime(2026, 3, 2, 7, 30, 15, 250000, tzinfo=timezone(timedelta(hours=-5))),
            restrictions=(Restriction.weekly(0, "09:00", 4, "17:00"), Restriction.weekly(5, "10:00", 0, "08:00")),
        ),
    ),
    overrides=(Override("ovr_1", "usr_z", T0, T0 + timedelta(hours=3)),),
)


def test_a_full_schedule_is_valid_and_lists_become_tuples():
    validate_schedule(FULL)
    made = Layer("l", "L", ["a", "b"], "daily", "09:00", T0, restrictions=[Restriction.daily("09:00", "17:00")])  # type: ignore[arg-type]
    assert made.members == ("a", "b") and isinstance(made.restrictions, tuple)
    assert isinstance(Schedule("s", "S", "UTC", [made]).layers, tuple)  # type: ignore[arg-type]
    assert hash(FULL) == hash(Schedule.from_dict(FULL.to_dict()))


def test_round_trip_through_json_keeps_every_field():
    data = json.loads(json.dumps(FULL.to_dict()))
    assert data["layers"][0]["start"] == "2026-03-02T14:00:00Z"
    assert data["layers"][1]["start"] == "2026-03-02T12:30:15.250000Z"
    assert data["layers"][1]["restrictions"][0] == {
        "kind": "weekly",
        "start_day": 0,
        "start": "09:00",
        "end_day": 4,
        "end": "17:00",
    }
    assert data["layers"][0]["restrictions"] == [{"kind": "daily", "start": "22:00", "end": "06:00"}]
    assert data["overrides"][0] == {
        "override_id": "ovr_1",
        "user_id": "usr_z",
        "start": "2026-03-02T14:00:00Z",
        "end": "2026-03-02T17:00:00Z",
    }
    assert Schedule.from_dict(data) == FULL
    assert Layer.from_dict(data["layers"][1]) == FULL.layers[1]
    assert Override.from_dict(data["overrides"][0]) == FULL.overrides[0]
    assert Restriction.from_dict(data["layers"][0]["restrictions"][0]) == Restriction.daily("22:00", "06:00")


def test_from_dict_accepts_dynamodb_numbers_datetimes_and_missing_optionals():
    data = FULL.to_dict()
    data["layers"][1]["rotation_hours"] = Decimal("12")
    data["layers"][1]["restrictions"][0]["start_day"] = Decimal("0")
    data["layers"][1]["restrictions"][0]["end_day"] = 4.0
    data["layers"][0]["start"] = T0
    del data["overrides"]
    del data["team_id"]
    del data["layers"][1]["restrictions"][1]
    restored = Schedule.from_dict(data)
    assert restored.overrides == () and restored.team_id is None
    assert restored.layers[1].rotation_hours == 12
    assert restored.layers[1].restrictions == (Restriction.weekly(0, "09:00", 4, "17:00"),)


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.pop("name"), "name"),
        (lambda d: d.update(layers="nope"), "layers"),
        (lambda d: d["layers"][0].update(members=[1]), "layers.0.members.0"),
        (lambda d: d["layers"][0].update(start="2026-03-02T09:00:00"), "layers.0.start"),
        (lambda d: d["layers"][0].update(start="yesterday"), "layers.0.start"),
        (lambda d: d["layers"][0].update(end=12), "layers.0.end"),
        (lambda d: d["layers"][1].update(rotation_hours="12"), "layers.1.rotation_hours"),
        (lambda d: d["layers"][1].update(rotation_hours=1.5), "layers.1.rotation_hours"),
        (lambda d: d["layers"][1]["restrictions"][0].pop("end_day"), "layers.1.restrictions.0.end_day"),
        (lambda d: d["layers"][1]["restrictions"][0].update(kind="monthly"), "layers.1.restrictions.0.kind"),
        (lambda d: d["layers"][0]["restrictions"].append("x"), "layers.0.restrictions.1"),
        (lambda d: d["overrides"][0].update(end=None), "overrides.0.end"),
        (lambda d: d["overrides"].append(None), "overrides.1"),
    ],
)
def test_from_dict_reports_the_field_with_the_wrong_shape(mutate, field):
    data = json.loads(json.dumps(FULL.to_dict()))
    mutate(data)
    with pytest.raises(ValidationFailed) as caught:
        Schedule.from_dict(data)
    assert field in fields_of(caught.value)


def test_from_dict_of_a_non_object():
    with pytest.raises(ValidationFailed) as caught:
        Schedule.from_dict([])  # type: ignore[arg-type]
    assert "schedule" in fields_of(caught.value)
    with pytest.raises(ValidationFailed):
        Override.from_dict({"override_id": "o"})
    with pytest.raises(ValidationFailed):
        Layer.from_dict({})
    with pytest.raises(ValidationFailed):
        Restriction.from_dict({"kind": "daily", "start": 9})


@pytest.mark.parametrize(
    ("candidate", "field"),
    [
        (schedule(schedule_id=""), "schedule_id"),
        (schedule(name=" "), "name"),
        (schedule(name="x" * 101), "name"),
        (schedule(team_id=""), "team_id"),
        (schedule(time_zone="Mars/Olympus"), "time_zone"),
        (schedule(time_zone="localtime"), "time_zone"),
        (schedule(time_zone="../etc/passwd"), "time_zone"),
        (schedule(time_zone=""), "time_zone"),
        (schedule(layers=()), "layers"),
        (schedule(layers=tuple(layer(layer_id=f"l{i}") for i in range(MAX_LAYERS + 1))), "layers"),
        (schedule(layers=(layer(), layer())), "layers.1.layer_id"),
        (schedule(layers=(layer(members=()),)), "layers.0.members"),
        (schedule(layers=(layer(members=tuple(f"u{i}" for i in range(MAX_MEMBERS + 1))),)), "layers.0.members"),
        (schedule(layers=(layer(members=("usr_a", "")),)), "layers.0.members.1"),
        (schedule(layers=(layer(name=""),)), "layers.0.name"),
        (schedule(layers=(layer(rotation="monthly"),)), "layers.0.rotation"),
        (schedule(layers=(layer(rotation="custom"),)), "layers.0.rotation_hours"),
        (schedule(layers=(layer(rotation="custom", rotation_hours=0),)), "layers.0.rotation_hours"),
        (schedule(layers=(layer(rotation="custom", rotation_hours=CUSTOM_HOURS_MAX + 1),)), "layers.0.rotation_hours"),
        (schedule(layers=(layer(rotation="custom", rotation_hours=True),)), "layers.0.rotation_hours"),
        (schedule(layers=(layer(rotation="daily", rotation_hours=24),)), "layers.0.rotation_hours"),
        (schedule(layers=(layer(handoff_time="9:00"),)), "layers.0.handoff_time"),
        (schedule(layers=(layer(handoff_time="24:00"),)), "layers.0.handoff_time"),
        (schedule(layers=(layer(handoff_time="09:60"),)), "layers.0.handoff_time"),
        (schedule(layers=(layer(start=datetime(2026, 3, 2, 9, 0)),)), "layers.0.start"),
        (schedule(layers=(layer(start=datetime(1969, 12, 31, tzinfo=UTC)),)), "layers.0.start"),
        (schedule(layers=(layer(start="2026-03-02"),)), "layers.0.start"),
        (schedule(layers=(layer(end=T0),)), "layers.0.end"),
        (schedule(layers=(layer(end=T0 - timedelta(seconds=1)),)), "layers.0.end"),
        (schedule(layers=(layer(end=datetime(2300, 1, 1, tzinfo=UTC)),)), "layers.0.end"),
        (schedule(layers=(layer(restrictions=(Restriction.daily("09:00", "09:00"),)),)), "layers.0.restrictions.0.end"),
        (schedule(layers=(layer(restrictions=(Restriction.daily("9", "17:00"),)),)), "layers.0.restrictions.0.start"),
        (
            schedule(layers=(layer(restrictions=(Restriction("daily", "09:00", "17:00", 1, None),)),)),
            "layers.0.restrictions.0.start_day",
        ),
        (
            schedule(layers=(layer(restrictions=(Restriction.weekly(7, "09:00", 1, "17:00"),)),)),
            "layers.0.restrictions.0.start_day",
        ),
        (
            schedule(layers=(layer(restrictions=(Restriction("weekly", "09:00", "17:00", 1, None),)),)),
            "layers.0.restrictions.0.end_day",
        ),
        (
            schedule(layers=(layer(restrictions=(Restriction.weekly(2, "09:00", 2, "09:00"),)),)),
            "layers.0.restrictions.0.end",
        ),
        (
            schedule(layers=(layer(restrictions=(Restriction("hourly", "09:00", "17:00"),)),)),  # type: ignore[arg-type]
            "layers.0.restrictions.0.kind",
        ),
        (
            schedule(layers=(layer(restrictions=tuple(Restriction.daily("09:00", "10:00") for _ in range(15))),)),
            "layers.0.restrictions",
        ),
        (schedule(overrides=(Override("", "usr_a", T0, T0 + timedelta(hours=1)),)), "overrides.0.override_id"),
        (schedule(overrides=(Override("o", "", T0, T0 + timedelta(hours=1)),)), "overrides.0.user_id"),
        (schedule(overrides=(Override("o", "usr_a", T0, T0),)), "overrides.0.end"),
        (
            schedule(overrides=(Override("o", "usr_a", T0.replace(tzinfo=None), T0 + timedelta(hours=1)),)),
            "overrides.0.start",
        ),
        (
            schedule(
                overrides=(
                    Override("o", "u", T0, T0 + timedelta(hours=1)),
                    Override("o", "u", T0, T0 + timedelta(hours=1)),
                )
            ),
            "overrides.1.override_id",
        ),
    ],
)
def test_validation_names_the_field(candidate, field):
    assert field in invalid_fields(candidate)


def test_validation_lists_every_problem_at_once():
    broken = schedule(
        name="",
        time_zone="Nowhere/City",
        layers=(layer(members=(), handoff_time="25:00"), layer(rotation="custom")),
        overrides=(Override("o", "u", T0, T0 - timedelta(hours=1)),),
    )
    fields = invalid_fields(broken)
    assert {
        "name",
        "time_zone",
        "layers.0.members",
        "layers.0.handoff_time",
        "layers.1.layer_id",
        "layers.1.rotation_hours",
        "overrides.0.end",
    } <= set(fields)


def test_weekly_restriction_wrapping_the_week_and_daily_wrapping_midnight_are_valid():
    validate_schedule(
        schedule(
            layers=(
                layer(
                    restrictions=(
                        Restriction.weekly(4, "18:00", 0, "08:00"),
                        Restriction.weekly(2, "09:00", 2, "08:00"),
                        Restriction.daily("23:00", "01:00"),
                    )
                ),
            )
        )
    )


def test_validate_override_alone():
    validate_override(Override("o", "usr_a", T0, T0 + timedelta(minutes=1)))
    with pytest.raises(ValidationFailed) as caught:
        validate_override(Override("o", "usr_a", T0, T0))
    assert "end" in fields_of(caught.value)


@pytest.mark.parametrize("name", ["America/New_York", "Europe/Berlin", "UTC", "Asia/Kolkata", "Etc/GMT+5"])
def test_real_zones_are_valid(name):
    assert is_valid_zone(name)


@pytest.mark.parametrize("name", ["", "Mars/Olympus", "America", "posixrules", "Factory", "/etc/localtime", 5, None])
def test_other_zones_are_not(name):
    assert not is_valid_zone(name)


def test_time_helpers():
    assert minutes_of("00:00") == 0 and minutes_of("23:59") == 1439
    assert parse_hhmm("07:05").hour == 7
    with pytest.raises(ValueError):
        parse_hhmm("7:05")
    assert format_moment(datetime(2026, 1, 1, 5, tzinfo=timezone(timedelta(hours=5)))) == "2026-01-01T00:00:00Z"
    assert parse_moment("2026-01-01T00:00:00Z") == datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_moment("2026-01-01T00:00:00") is None
    assert parse_moment(datetime(2026, 1, 1)) is None
    assert parse_moment(None) is None
