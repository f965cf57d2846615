"""The urgency rule and support hours (chalicelib.catalog.urgency), as tables."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from chalicelib.catalog.urgency import (
    DEFAULT_RULE,
    SupportHours,
    UrgencyRule,
    canonical_days,
    check_rule,
    incident_urgency,
    rule_from_dict,
    rule_problems,
)
from chalicelib.errors import InvalidSeverity, ValidationFailed
from chalicelib.severity import SEVERITIES

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri")
BERLIN_OFFICE = SupportHours(time_zone="Europe/Berlin", days=WEEKDAYS, start="09:00", end="17:00")
NIGHT_SHIFT = SupportHours(time_zone="UTC", days=WEEKDAYS, start="22:00", end="06:00")
# 2026-11-23 is a Monday.
MONDAY_NOON_UTC = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def at(text: str) -> datetime:
    """An RFC 3339 instant (the offset says which one)."""
    return datetime.fromisoformat(text)


# --- the rule without support hours --------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule_type", "expected"),
    [
        ("severity_based", ("high", "high", "low", "low", "low")),
        ("high", ("high",) * 5),
        ("low", ("low",) * 5),
    ],
)
def test_rule_types_by_severity(rule_type, expected):
    rule = UrgencyRule(type=rule_type)
    assert tuple(incident_urgency(rule, severity, MONDAY_NOON_UTC) for severity in SEVERITIES) == expected


def test_the_default_rule_is_severity_based_without_support_hours():
    assert UrgencyRule(type="severity_based", support_hours=None) == DEFAULT_RULE
    assert DEFAULT_RULE.to_dict() == {"type": "severity_based", "support_hours": None}


def test_an_unknown_severity_is_refused():
    with pytest.raises(InvalidSeverity):
        incident_urgency(DEFAULT_RULE, "SEV9", MONDAY_NOON_UTC)


# --- support hours ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("moment", "inside"),
    [
        ("2026-11-23T09:00:00+01:00", True),  # Monday, the first minute
        ("2026-11-23T08:59:59+01:00", False),
        ("2026-11-23T16:59:59+01:00", True),
        ("2026-11-23T17:00:00+01:00", False),  # end excluded
        ("2026-11-23T08:30:00Z", True),  # 09:30 in Berlin (CET, +01:00)
        ("2026-11-27T15:59:00Z", True),  # Friday 16:59 local
        ("2026-11-28T12:00:00+01:00", False),  # Saturday
        ("2026-11-29T12:00:00+01:00", False),  # Sunday
        # Summer time (CEST, +02:00): the same wall-clock hours are other UTC hours.
        ("2026-07-06T07:00:00Z", True),  # Monday 09:00 CEST
        ("2026-07-06T06:59:00Z", False),
        ("2026-07-06T15:00:00Z", False),  # 17:00 CEST
    ],
)
def test_office_hours_in_berlin(moment, inside):
    assert BERLIN_OFFICE.contains(at(moment)) is inside


@pytest.mark.parametrize(
    ("moment", "inside"),
    [
        ("2026-11-23T21:59:00Z", False),  # Monday before the window
        ("2026-11-23T22:00:00Z", True),  # Monday 22:00: starts on a listed day
        ("2026-11-24T03:00:00Z", True),  # Tuesday morning: the tail of Monday's window
        ("2026-11-24T05:59:00Z", True),
        ("2026-11-24T06:00:00Z", False),  # end excluded
        ("2026-11-24T12:00:00Z", False),
        ("2026-11-23T03:00:00Z", False),  # Monday morning: Sunday is not listed
        ("2026-11-28T03:00:00Z", True),  # Saturday morning: the tail of Friday's window
        ("2026-11-28T22:30:00Z", False),  # Saturday evening: Saturday is not listed
        ("2026-11-29T23:00:00Z", False),  # Sunday evening
    ],
)
def test_overnight_window_belongs_to_the_day_it_starts(moment, inside):
    assert NIGHT_SHIFT.contains(at(moment)) is inside


@pytest.mark.parametrize(
    ("moment", "inside"),
    [
        ("2026-11-23T23:59:00Z", True),
        ("2026-11-24T00:00:00Z", False),  # end 00:00 is midnight
        ("2026-11-23T17:59:00Z", False),
    ],
)
def test_end_at_midnight(moment, inside):
    hours = SupportHours(time_zone="UTC", days=("mon",), start="18:00", end="00:00")
    assert hours.contains(at(moment)) is inside


NEW_YORK = "America/New_York"


@pytest.mark.parametrize(
    ("start", "end", "moment", "inside"),
    [
        # Spring forward, Sunday 2026-03-08: 02:00 EST jumps to 03:00 EDT.
        ("02:00", "02:45", "2026-03-08T06:59:59Z", False),  # 01:59:59 EST
        ("02:00", "02:45", "2026-03-08T07:00:00Z", False),  # 03:00 EDT: 02:00-02:45 never shown that day
        ("01:00", "03:30", "2026-03-08T06:30:00Z", True),  # 01:30 EST
        ("01:00", "03:30", "2026-03-08T07:15:00Z", True),  # 03:15 EDT
        ("01:00", "03:30", "2026-03-08T07:30:00Z", False),  # 03:30 EDT: the window lasted 1.5 h
        ("09:00", "17:00", "2026-03-08T13:00:00Z", True),  # 09:00 EDT (the UTC hour moved)
        ("09:00", "17:00", "2026-03-08T13:59:00Z", True),
        ("09:00", "17:00", "2026-03-08T12:59:00Z", False),  # 08:59 EDT
        # Fall back, Sunday 2026-11-01: 02:00 EDT falls back to 01:00 EST; 01:00-02:00 is shown twice.
        ("01:00", "01:30", "2026-11-01T05:15:00Z", True),  # 01:15 EDT
        ("01:00", "01:30", "2026-11-01T05:45:00Z", False),  # 01:45 EDT
        ("01:00", "01:30", "2026-11-01T06:15:00Z", True),  # 01:15 EST: shown again, inside again
        ("01:00", "01:30", "2026-11-01T06:45:00Z", False),
        ("09:00", "17:00", "2026-11-01T14:00:00Z", True),  # 09:00 EST
        ("09:00", "17:00", "2026-11-01T13:59:00Z", False),
    ],
)
def test_support_hours_across_daylight_saving_changes(start, end, moment, inside):
    hours = SupportHours(time_zone=NEW_YORK, days=("sun",), start=start, end=end)
    assert hours.contains(at(moment)) is inside


@pytest.mark.parametrize(
    ("moment", "inside"),
    [
        # Overnight 22:00-06:00 on Saturday nights across the fall-back change (Sun 2026-11-01):
        # the night is one hour longer in real time.
        ("2026-11-01T02:00:00Z", True),  # Sat 22:00 EDT
        ("2026-11-01T10:59:00Z", True),  # Sun 05:59 EST
        ("2026-11-01T11:00:00Z", False),  # Sun 06:00 EST
        # ... and across spring forward (Sun 2026-03-08): one hour shorter.
        ("2026-03-08T03:00:00Z", True),  # Sat 22:00 EST
        ("2026-03-08T09:59:00Z", True),  # Sun 05:59 EDT
        ("2026-03-08T10:00:00Z", False),  # Sun 06:00 EDT
    ],
)
def test_overnight_window_across_daylight_saving_changes(moment, inside):
    hours = SupportHours(time_zone=NEW_YORK, days=("sat",), start="22:00", end="06:00")
    assert hours.contains(at(moment)) is inside


def test_a_naive_instant_is_read_as_utc():
    hours = SupportHours(time_zone="UTC", days=("mon",), start="11:00", end="13:00")
    assert hours.contains(datetime(2026, 11, 23, 12, 0)) is True
    assert hours.contains(datetime(2026, 11, 23, 12, 0, tzinfo=timezone(timedelta(hours=5)))) is False


@pytest.mark.parametrize(
    ("rule_type", "severity", "moment", "expected"),
    [
        ("severity_based", "SEV1", "2026-11-23T10:00:00+01:00", "high"),  # inside: the rule applies
        ("severity_based", "SEV3", "2026-11-23T10:00:00+01:00", "low"),
        ("severity_based", "SEV0", "2026-11-23T20:00:00+01:00", "low"),  # outside: always low
        ("high", "SEV4", "2026-11-23T10:00:00+01:00", "high"),
        ("high", "SEV4", "2026-11-28T10:00:00+01:00", "low"),  # Saturday
        ("low", "SEV0", "2026-11-23T10:00:00+01:00", "low"),
    ],
)
def test_outside_support_hours_urgency_is_low(rule_type, severity, moment, expected):
    rule = UrgencyRule(type=rule_type, support_hours=BERLIN_OFFICE)
    assert incident_urgency(rule, severity, at(moment)) == expected


# --- checking a rule -------------------------------------------------------------------------------


def hours(**changes: object) -> SupportHours:
    fields: dict[str, object] = {"time_zone": "Europe/Berlin", "days": ("mon",), "start": "09:00", "end": "17:00"}
    fields.update(changes)
    return SupportHours(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rule", "problems"),
    [
        (DEFAULT_RULE, []),
        (UrgencyRule("high", hours()), []),
        (UrgencyRule("low", hours(start="22:00", end="06:00")), []),
        (UrgencyRule("urgent"), [("urgency_rule.type", "must be one of severity_based, high, low")]),  # type: ignore[arg-type]
        (
            UrgencyRule("high", hours(time_zone="Mars/Olympus")),
            [
                (
                    "urgency_rule.support_hours.time_zone",
                    "must be an IANA time zone such as Europe/Berlin or America/New_York",
                )
            ],
        ),
        (UrgencyRule("high", hours(time_zone="localtime")), [("urgency_rule.support_hours.time_zone", None)]),
        (UrgencyRule("high", hours(time_zone="../etc/passwd")), [("urgency_rule.support_hours.time_zone", None)]),
        (UrgencyRule("high", hours(days=())), [("urgency_rule.support_hours.days", "must list at least one day")]),
        (UrgencyRule("high", hours(days=("mon", "someday"))), [("urgency_rule.support_hours.days", None)]),
        (UrgencyRule("high", hours(start="9:00")), [("urgency_rule.support_hours.start", None)]),
        (UrgencyRule("high", hours(end="24:00")), [("urgency_rule.support_hours.end", None)]),
        (
            UrgencyRule("high", hours(start="08:00", end="08:00")),
            [("urgency_rule.support_hours.end", "must differ from start (an end before start runs overnight)")],
        ),
        (
            UrgencyRule("high", hours(time_zone="Nowhere", days=(), start="99:00")),
            [
                ("urgency_rule.support_hours.time_zone", None),
                ("urgency_rule.support_hours.days", None),
                ("urgency_rule.support_hours.start", None),
            ],
        ),
    ],
)
def test_rule_problems(rule, problems):
    found = rule_problems(rule)
    assert [item["field"] for item in found] == [field for field, _ in problems]
    for item, (_, message) in zip(found, problems, strict=True):
        if message is not None:
            assert item["message"] == message


def test_check_rule_raises_with_every_problem():
    with pytest.raises(ValidationFailed) as raised:
        check_rule(UrgencyRule("high", hours(time_zone="Nowhere", start="10:00", end="10:00")))
    assert [item["field"] for item in raised.value.details["fields"]] == [
        "urgency_rule.support_hours.time_zone",
        "urgency_rule.support_hours.end",
    ]
    assert raised.value.status == 400
    assert check_rule(DEFAULT_RULE) is DEFAULT_RULE


def test_canonical_days_are_unique_and_monday_first():
    assert canonical_days(["sun", "mon", "mon", "wed"]) == ("mon", "wed", "sun")
    assert canonical_days([]) == ()


# --- stored rules ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        (None, DEFAULT_RULE),  # services stored before the rule existed
        ({}, DEFAULT_RULE),
        ({"type": "high", "support_hours": None}, UrgencyRule("high")),
        (
            {
                "type": "low",
                "support_hours": {"time_zone": "UTC", "days": ["fri", "mon"], "start": "22:00", "end": "06:00"},
            },
            UrgencyRule("low", SupportHours("UTC", ("mon", "fri"), "22:00", "06:00")),
        ),
        ({"type": "nonsense"}, DEFAULT_RULE),
        # A stored zone that no longer loads: the default rule, not an error on every incident.
        (
            {
                "type": "high",
                "support_hours": {"time_zone": "Gone/Zone", "days": ["mon"], "start": "09:00", "end": "17:00"},
            },
            DEFAULT_RULE,
        ),
        ("not a mapping", DEFAULT_RULE),
    ],
)
def test_rule_from_dict(stored, expected):
    assert rule_from_dict(stored) == expected


def test_to_dict_round_trips():
    rule = UrgencyRule("severity_based", BERLIN_OFFICE)
    assert rule.to_dict() == {
        "type": "severity_based",
        "support_hours": {"time_zone": "Europe/Berlin", "days": list(WEEKDAYS), "start": "09:00", "end": "17:00"},
    }
    assert rule_from_dict(rule.to_dict()) == rule
