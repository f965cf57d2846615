"""The words of a handoff notice: subject, text and a short text that fits one SMS. Pure."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.oncall.handoff_text import SHORT_TEXT_MAX, gsm7_length, render_notice, short_name, to_gsm7
from chalicelib.oncall.handoffs import Handoff

AT = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)  # Mon 09:00 in Berlin
ENDS = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
ON = Handoff("usr_1", "on_call", AT, ENDS)
OFF = Handoff("usr_2", "off_call", AT)
# The longest zone name the API accepts is 64 characters; the longest real one is about 30.
LONG_ZONE = "America/Argentina/ComodRivadavia"


def test_on_call_notice() -> None:
    words = render_notice(ON, schedule_name="Primary", time_zone="Europe/Berlin")
    assert words.subject == "You are on call for Primary from Mon 23 Nov 09:00 (Europe/Berlin)"
    assert words.text == (
        "You are on call for the schedule Primary.\n"
        "From: Mon 23 Nov 2026 09:00 CET\n"
        "Until: Mon 30 Nov 2026 09:00 CET\n"
        "Times are in Europe/Berlin."
    )
    assert (
        words.short_text
        == "Tocsin: you are on call for Primary from Mon 23 Nov 09:00 to Mon 30 Nov 09:00 (Europe/Berlin)."
    )


def test_off_call_notice() -> None:
    words = render_notice(OFF, schedule_name="Primary", time_zone="America/New_York")
    assert words.subject == "You are off call for Primary from Mon 23 Nov 03:00 (America/New_York)"
    assert words.text == (
        "Your on-call shift for the schedule Primary ends.\n"
        "Off call from: Mon 23 Nov 2026 03:00 EST\n"
        "Times are in America/New_York."
    )
    assert words.short_text == "Tocsin: you are off call for Primary from Mon 23 Nov 03:00 (America/New_York)."


def test_no_end_within_the_horizon() -> None:
    words = render_notice(Handoff("usr_1", "on_call", AT, None), schedule_name="Solo", time_zone="UTC")
    assert "Until: further notice (no end within 35 days)" in words.text
    assert words.short_text == "Tocsin: you are on call for Solo from Mon 23 Nov 08:00 (UTC)."


def test_times_follow_the_zone_across_dst() -> None:
    summer = Handoff("usr_1", "on_call", datetime(2026, 3, 23, 8, 0, tzinfo=UTC), datetime(2026, 3, 30, 7, tzinfo=UTC))
    words = render_notice(summer, schedule_name="Primary", time_zone="Europe/Berlin")
    assert "From: Mon 23 Mar 2026 09:00 CET\nUntil: Mon 30 Mar 2026 09:00 CEST" in words.text


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("P" * 100, id="longest-name"),
        pytest.param("[Ops] {Database} ~ core|edge " * 4, id="extension-characters-count-two"),
        pytest.param("Bereitschaft Büro Zürich \u2013 Nacht 🚨 " * 3, id="non-gsm-characters"),
        pytest.param("数据库值班" * 20, id="no-latin-at-all"),
    ],
)
@pytest.mark.parametrize("handoff", [ON, OFF, Handoff("usr_1", "on_call", AT, None)], ids=["on", "off", "on-no-end"])
@pytest.mark.parametrize("zone", ["UTC", LONG_ZONE])
def test_the_short_text_fits_one_sms_in_gsm7(name: str, handoff: Handoff, zone: str) -> None:
    short = render_notice(handoff, schedule_name=name[:100], time_zone=zone).short_text
    assert to_gsm7(short) == short
    assert gsm7_length(short) <= SHORT_TEXT_MAX
    assert short.endswith(f"({zone}).") and "Mon 23 Nov" in short
    whole = short_name(name[:100])
    assert f"for {whole} from" in short or "... from" in short  # the whole name, or shortened before the times


def test_a_name_that_fits_is_kept_whole_and_converted() -> None:
    short = render_notice(OFF, schedule_name="Büro Zürich \u2013 Nacht", time_zone="Europe/Berlin").short_text
    assert short == "Tocsin: you are off call for Büro Zürich ? Nacht from Mon 23 Nov 09:00 (Europe/Berlin)."


def test_a_shortened_name_ends_with_dots() -> None:
    short = render_notice(ON, schedule_name="Database " * 11, time_zone="Europe/Berlin").short_text
    assert short == (
        "Tocsin: you are on call for Database Database Database Database Database Database Database Databas... "
        "from Mon 23 Nov 09:00 to Mon 30 Nov 09:00 (Europe/Berlin)."
    )
    assert gsm7_length(short) == SHORT_TEXT_MAX  # cut one letter at a time: the longest that fits


@pytest.mark.parametrize(
    ("name", "expected"),
    [("Primary", "Primary"), ("Ops  🚨🚨 night", "Ops ? night"), ("数据库值班", "your schedule"), ("Ärger", "Ärger")],
)
def test_short_name(name: str, expected: str) -> None:
    assert short_name(name) == expected


@pytest.mark.parametrize(
    ("text", "converted", "septets"),
    [
        ("Primary", "Primary", 7),
        ("[a]", "[a]", 5),
        ("€5", "€5", 3),
        ("Café Ærø", "Caf? Ærø".replace("?", "é"), 8),
        ("Łódź", "?odz", 4),
        ("ﬁre", "fire", 4),
        ("🚨", "?", 1),
    ],
)
def test_gsm7(text: str, converted: str, septets: int) -> None:
    assert to_gsm7(text) == converted
    assert gsm7_length(converted) == septets
