"""Counting words for people: "1 minute", "5 minutes", "1 person", "3 people". Pure.

Templates use it as the `counted` filter (`{{ level.delay_minutes | counted("minute") }}`), Python
code calls `counted` itself, so no page writes "1 minutes".
"""

from __future__ import annotations

# Nouns whose plural is not the singular plus "s".
IRREGULAR = {"person": "people"}


def plural_of(noun: str) -> str:
    if noun in IRREGULAR:
        return IRREGULAR[noun]
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return noun[:-1] + "ies"  # policy -> policies, but day -> days
    if noun.endswith(("s", "x", "sh", "ch")):
        return noun + "es"
    return noun + "s"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and the noun, singular for exactly one (English plural rules: 0 minutes, 1 minute)."""
    return f"{count} {noun if count == 1 else plural or plural_of(noun)}"


_SPANS = ((24 * 60, "day"), (60, "hour"), (1, "minute"))


def minutes_in_words(minutes: int) -> str:
    """A span of minutes in whole days, hours and minutes, exactly: "45 minutes", "4 hours", "1 day",
    "1 hour 30 minutes" (a target of 2880 reads as "2 days", not "2880 minutes")."""
    parts: list[str] = []
    left = minutes
    for size, unit in _SPANS:
        count, left = divmod(left, size)
        if count:
            parts.append(counted(count, unit))
    return " ".join(parts) or counted(0, "minute")
