"""Working hours, evenings and sleep: the bands a local hour falls in (pure).

Defaults (docs/INSIGHTS.md): working hours 09:00-18:00 Monday to Friday; sleep 23:00-07:00 every
day; every other hour is "evening" (awake, off work: early mornings, evenings and weekend days).
An organization may set its own (`insights_bands` in its settings), whole hours only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from chalicelib.errors import ValidationFailed

Band = Literal["working", "evening", "sleep"]
BANDS: tuple[Band, ...] = ("working", "evening", "sleep")


@dataclass(frozen=True)
class Bands:
    working_start: int = 9  # local hour the working day starts
    working_end: int = 18  # local hour it ends (exclusive)
    sleep_start: int = 23
    sleep_end: int = 7  # exclusive; sleep may cross midnight
    working_days: tuple[int, ...] = (0, 1, 2, 3, 4)  # Monday is 0

    def band_of(self, local: datetime) -> Band:
        hour = local.hour
        if _within(hour, self.sleep_start, self.sleep_end):
            return "sleep"
        if local.weekday() in self.working_days and _within(hour, self.working_start, self.working_end):
            return "working"
        return "evening"

    def is_working(self, local: datetime) -> bool:
        return self.band_of(local) == "working"

    def to_dict(self) -> dict[str, Any]:
        return {
            "working_start_hour": self.working_start,
            "working_end_hour": self.working_end,
            "sleep_start_hour": self.sleep_start,
            "sleep_end_hour": self.sleep_end,
            "working_days": list(self.working_days),
        }


DEFAULT_BANDS = Bands()


def _within(hour: int, start: int, end: int) -> bool:
    """[start, end) on a 24-hour clock; crossing midnight when end <= start (start == end: never)."""
    if start == end:
        return False
    return start <= hour < end if start < end else hour >= start or hour < end


def bands_from(stored: Mapping[str, Any] | None) -> Bands:
    """An organization's bands (the defaults for what it did not set). ValidationFailed when invalid."""
    if not stored:
        return DEFAULT_BANDS
    defaults = DEFAULT_BANDS.to_dict()
    values = {**defaults, **{key: stored[key] for key in defaults if key in stored}}
    problems = []
    for key in ("working_start_hour", "working_end_hour", "sleep_start_hour", "sleep_end_hour"):
        value = values[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 24:
            problems.append({"field": key, "message": "must be a whole hour from 0 to 24"})
    days = values["working_days"]
    if not isinstance(days, list) or any(isinstance(d, bool) or d not in range(7) for d in days):
        problems.append({"field": "working_days", "message": "must be a list of weekdays, 0 (Monday) to 6"})
    if problems:
        raise ValidationFailed.for_fields(problems, "The working-hours bands are invalid.")
    return Bands(
        working_start=values["working_start_hour"] % 24,
        working_end=values["working_end_hour"] if values["working_end_hour"] <= 24 else 24,
        sleep_start=values["sleep_start_hour"] % 24,
        sleep_end=values["sleep_end_hour"] % 24,
        working_days=tuple(sorted(set(days))),
    )
