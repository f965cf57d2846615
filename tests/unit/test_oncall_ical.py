"""The iCalendar feed: RFC 5545 structure, UTC times, stable UIDs, escaping and folding, parsed back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.oncall import FinalShift
from chalicelib.oncall.ical import LINE_LIMIT, PRODID, escape_text, fold, render_ical, shift_uid

NOW = datetime(2026, 3, 1, 12, 0, 5, 123456, tzinfo=UTC)
SHIFTS = [
    FinalShift("usr_a", datetime(2026, 3, 7, 14, tzinfo=UTC), datetime(2026, 3, 8, 13, tzinfo=UTC), "layer", "lyr_1"),
    FinalShift(
        "usr_z", datetime(2026, 3, 8, 13, tzinfo=UTC), datetime(2026, 3, 8, 15, tzinfo=UTC), "override", None, "o1"
    ),
    FinalShift(
        "usr_b",
        datetime(2026, 3, 8, 10, tzinfo=timezone(timedelta(hours=-5))),
        datetime(2026, 3, 9, 13, tzinfo=UTC),
        "layer",
        "lyr_1",
    ),
]
NAMES = {"usr_a": "Ada Lovelace", "usr_z": 'Zed, the "Backup"; on-call\\night'}


# --- a tiny RFC 5545 reader, independent of the writer -----------------------------------------


def unfold(text: str) -> list[str]:
    assert text.endswith("\r\n")
    assert "\n" not in text.replace("\r\n", "")  # every line break is CRLF
    return text.replace("\r\n ", "").replace("\r\n\t", "").split("\r\n")[:-1]


def unescape(value: str) -> str:
    out, index = [], 0
    while index < len(value):
        char = value[index]
        if char == "\\" and index + 1 < len(value):
            following = value[index + 1]
            out.append("\n" if following in "nN" else following)
            index += 2
            continue
        assert char not in ";,", f"unescaped {char!r} in TEXT"
        out.append(char)
        index += 1
    return "".join(out)


def parse(text: str) -> tuple[dict[str, str], list[dict[str, str]]]:
    """(calendar properties, events) with raw values; nesting checked."""
    calendar: dict[str, str] = {}
    events: list[dict[str, str]] = []
    stack: list[str] = []
    for line in unfold(text):
        name, _, value = line.partition(":")
        if name == "BEGIN":
            stack.append(value)
            if value == "VEVENT":
                events.append({})
            continue
        if name == "END":
            assert stack.pop() == value
            continue
        target = events[-1] if stack[-1] == "VEVENT" else calendar
        assert name not in target, f"duplicate {name}"
        target[name] = value
    assert stack == []
    return calendar, events


def utc_of(value: str) -> datetime:
    return datetime.strptime(value, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)


# --- tests ---------------------------------------------------------------------------------------


def test_calendar_structure_and_events_round_trip():
    text = render_ical(
        "Payments, primary",
        SHIFTS,
        NAMES,
        now=NOW,
        calendar_url="https://oncall.example.com/api/v1/schedules/sch_1.ics?token=a;b,c",
        schedule_id="sch_1",
        time_zone="America/New_York",
    )
    assert text.startswith("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n")
    assert text.endswith("END:VCALENDAR\r\n")
    calendar, events = parse(text)
    assert calendar["PRODID"] == PRODID
    assert calendar["VERSION"] == "2.0"
    assert calendar["CALSCALE"] == "GREGORIAN"
    assert calendar["METHOD"] == "PUBLISH"
    assert calendar["X-WR-CALNAME"] == "Payments\\, primary"
    assert unescape(calendar["X-WR-CALNAME"]) == "Payments, primary"
    assert calendar["X-WR-TIMEZONE"] == "America/New_York"
    assert calendar["URL"] == "https://oncall.example.com/api/v1/schedules/sch_1.ics?token=a;b,c"
    assert calendar["REFRESH-INTERVAL;VALUE=DURATION"] == "PT1H"
    assert len(events) == 3
    for event, shift in zip(events, SHIFTS, strict=True):
        assert event["DTSTAMP"] == "20260301T120005Z"
        assert utc_of(event["DTSTART"]) == shift.start
        assert utc_of(event["DTEND"]) == shift.end
        assert event["UID"] == shift_uid("sch_1", shift)
        assert event["TRANSP"] == "TRANSPARENT"
    assert events[2]["DTSTART"] == "20260308T150000Z"  # the -05:00 start written in UTC
    assert [unescape(e["SUMMARY"]) for e in events] == [
        "On call: Ada Lovelace",
        'On call: Zed, the "Backup"; on-call\\night',
        "On call: usr_b",  # no name known: the user id
    ]
    assert events[1]["SUMMARY"] == 'On call: Zed\\, the "Backup"\\; on-call\\\\night'
    assert "override o1" in unescape(events[1]["DESCRIPTION"])
    assert "layer lyr_1" in unescape(events[0]["DESCRIPTION"])
    assert len({e["UID"] for e in events}) == 3


def test_uids_are_stable_and_keyed_by_schedule_user_and_start():
    first = render_ical("Primary", SHIFTS, NAMES, now=NOW, schedule_id="sch_1")
    later = render_ical("Renamed", SHIFTS[::-1], {}, now=NOW + timedelta(hours=5), schedule_id="sch_1")
    assert {e["UID"] for e in parse(first)[1]} == {e["UID"] for e in parse(later)[1]}
    other = render_ical("Primary", SHIFTS, NAMES, now=NOW, schedule_id="sch_2")
    assert not {e["UID"] for e in parse(first)[1]} & {e["UID"] for e in parse(other)[1]}
    by_name = render_ical("Primary", SHIFTS, NAMES, now=NOW)
    assert parse(by_name)[1][0]["UID"] == shift_uid("Primary", SHIFTS[0])
    moved = FinalShift("usr_a", SHIFTS[0].start + timedelta(hours=1), SHIFTS[0].end, "layer", "lyr_1")
    assert shift_uid("sch_1", moved) != shift_uid("sch_1", SHIFTS[0])
    assert shift_uid("sch_1", SHIFTS[0]).endswith("@tocsin")


def test_empty_calendar_is_still_valid_and_defaults():
    calendar, events = parse(render_ical("Empty", [], {}, now=NOW))
    assert events == [] and calendar["X-WR-TIMEZONE"] == "UTC" and "URL" not in calendar


def test_newlines_and_control_characters_cannot_break_lines():
    text = render_ical(
        "Line\r\none\rtwo\nthree\x00\x07",
        [SHIFTS[0]],
        {"usr_a": "Evil\r\nBEGIN:VEVENT"},
        now=NOW,
        calendar_url="https://x.example/\r\nX-INJECTED:1",
    )
    calendar, events = parse(text)
    assert unescape(calendar["X-WR-CALNAME"]) == "Line\none\ntwo\nthree"
    assert unescape(events[0]["SUMMARY"]) == "On call: Evil\nBEGIN:VEVENT"
    assert "X-INJECTED" not in calendar and len(events) == 1
    assert "\x00" not in text and "\x07" not in text


def test_escape_text():
    assert escape_text("a\\b;c,d\ne\r\nf\rg\th") == "a\\\\b\\;c\\,d\\ne\\nf\\ng\th"


def test_long_lines_fold_at_75_octets_without_splitting_characters():
    name = "Ünïcödé 名前 " * 12 + "🙂" * 20
    text = render_ical(name, [SHIFTS[0]], {"usr_a": name}, now=NOW)
    for line in text.split("\r\n")[:-1]:
        assert len(line.encode("utf-8")) <= LINE_LIMIT
        line.encode("utf-8").decode("utf-8")  # each physical line is whole UTF-8
    assert "\r\n " in text
    calendar, events = parse(text)
    assert unescape(calendar["X-WR-CALNAME"]) == name
    assert unescape(events[0]["SUMMARY"]) == f"On call: {name}"


def test_fold_edges():
    exactly = "X" * LINE_LIMIT
    assert fold(exactly) == exactly
    folded = fold("X" * (LINE_LIMIT + 1))
    assert folded == "X" * LINE_LIMIT + "\r\n X"
    long = fold("Y" * 200)
    physical = long.split("\r\n")
    assert [len(p) for p in physical] == [75, 75, 52]
    assert all(p.startswith(" ") for p in physical[1:])


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300), st.text(max_size=120))
def test_any_text_round_trips_through_escape_and_fold(schedule_name, person):
    text = render_ical(schedule_name, [SHIFTS[0]], {"usr_a": person}, now=NOW)
    for line in text.split("\r\n")[:-1]:
        assert len(line.encode("utf-8")) <= LINE_LIMIT
    calendar, events = parse(text)
    clean = {ord(c): None for c in map(chr, [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F]) if c not in "\r\n"}

    def expected(value: str) -> str:
        return value.replace("\r\n", "\n").replace("\r", "\n").translate(clean)

    assert unescape(calendar["X-WR-CALNAME"]) == expected(schedule_name)
    assert unescape(events[0]["SUMMARY"]) == expected(f"On call: {person or 'usr_a'}")
