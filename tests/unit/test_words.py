"""Counting words: singular for exactly one, English plurals, spans of minutes in whole units."""

from __future__ import annotations

import pytest

from chalicelib.templates.words import counted, minutes_in_words, plural_of


@pytest.mark.parametrize(
    ("noun", "plural"),
    [("minute", "minutes"), ("person", "people"), ("policy", "policies"), ("day", "days"), ("match", "matches")],
)
def test_plurals(noun: str, plural: str) -> None:
    assert plural_of(noun) == plural


def test_one_is_singular_and_zero_is_plural() -> None:
    assert counted(1, "minute") == "1 minute"
    assert counted(0, "minute") == "0 minutes"
    assert counted(3, "person") == "3 people"
    assert counted(2, "index", "indices") == "2 indices"


@pytest.mark.parametrize(
    ("minutes", "words"),
    [
        (0, "0 minutes"),
        (1, "1 minute"),
        (45, "45 minutes"),
        (60, "1 hour"),
        (90, "1 hour 30 minutes"),
        (240, "4 hours"),
        (1440, "1 day"),
        (2880, "2 days"),
        (10080, "7 days"),
        (1500, "1 day 1 hour"),
        (1561, "1 day 2 hours 1 minute"),
    ],
)
def test_minutes_in_words(minutes: int, words: str) -> None:
    assert minutes_in_words(minutes) == words
