"""Whether PagerDuty counts a layer's whole-day turns by the calendar or by elapsed time, read
from its own answer. Pure.

A daily or weekly turn hands off at the same local time every day or week (the calendar), so a
layer started in summer still hands off at 09:00 in winter; counted in elapsed time it would
hand off at 08:00 or 10:00 after a daylight saving change. The two agree until such a change
lies between the layer's virtual start and the instant asked about. The reader asks PagerDuty
for the schedule's final schedule over the weeks ahead; here both counts are tried against it,
layer by layer (an override and the layers above hide some handoffs, so the whole schedule is
evaluated), and elapsed time is chosen only where it explains PagerDuty's answer better."""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo
from typing import Any

from chalicelib.client.importers import rotations
from chalicelib.client.importers.pagerduty_schedules import when

Entry = tuple[datetime, datetime, str]
PROBE = timedelta(minutes=1)


def _allowed(restrictions: list[dict[str, Any]], zone: tzinfo, moment: datetime) -> bool:
    """Is the wall clock at `moment` inside one of the layer's restriction windows?"""
    if not restrictions:
        return True
    local = moment.astimezone(zone)
    minute = local.hour * 60 + local.minute
    for item in restrictions:
        parts = [int(part) for part in str(item.get("start_time_of_day") or "00:00:00").split(":")] + [0]
        begin, length = parts[0] * 60 + parts[1], int(item.get("duration_seconds") or 0) // 60
        if item.get("type") == "weekly_restriction":
            begin += (int(item.get("start_day_of_week") or 1) - 1) * rotations.MINUTES_PER_DAY
            if (local.weekday() * rotations.MINUTES_PER_DAY + minute - begin) % rotations.MINUTES_PER_WEEK < length:
                return True
        elif (minute - begin) % rotations.MINUTES_PER_DAY < length:
            return True
    return False


class _Model:
    """PagerDuty's on call for one schedule, with chosen layers counted in elapsed time."""

    def __init__(self, schedule: dict[str, Any], zone: tzinfo) -> None:
        self.zone = zone
        self.layers = list(schedule.get("schedule_layers") or [])  # highest first
        self.overrides = [
            (start, end, str((o.get("user") or {}).get("id")))
            for o in schedule.get("overrides") or []
            if (start := when(o.get("start"))) and (end := when(o.get("end")))
        ]

    def turns(self, layer: dict[str, Any], elapsed: bool) -> rotations.Turns | None:
        origin = when(layer.get("rotation_virtual_start"))
        length = int(layer.get("rotation_turn_length_seconds") or 0)
        members = tuple(str((u.get("user") or u).get("id")) for u in layer.get("users") or [])
        if origin is None or length <= 0 or not members:
            return None
        days = None if elapsed or length % rotations.DAY_SECONDS else length // rotations.DAY_SECONDS
        return rotations.Turns(members, origin, self.zone, days, length)

    def on_call(self, moment: datetime, elapsed: frozenset[str]) -> str | None:
        covering = [who for start, end, who in self.overrides if start <= moment < end]
        if covering:
            return covering[-1]
        for layer in self.layers:
            start, end = when(layer.get("start")), when(layer.get("end"))
            if start is None or moment < start or (end is not None and moment >= end):
                continue
            if not _allowed(layer.get("restrictions") or [], self.zone, moment):
                continue
            turns = self.turns(layer, str(layer.get("id")) in elapsed)
            if turns is not None:
                return turns.member_at(moment)
        return None


def _entries(schedule: dict[str, Any]) -> list[Entry]:
    found = []
    for entry in ((schedule.get("final_schedule") or {}).get("rendered_schedule_entries")) or []:
        start, end = when(entry.get("start")), when(entry.get("end"))
        who = (entry.get("user") or {}).get("id")
        if start is not None and end is not None and who:
            found.append((start, end, str(who)))
    return found


def elapsed_layers(schedule: dict[str, Any], zone: str) -> frozenset[str]:
    """Ids of the layers whose whole-day turns PagerDuty's final schedule shows in elapsed time."""
    entries = _entries(schedule)
    if not entries:
        return frozenset()
    model = _Model(schedule, rotations.zone_of(zone))
    probes = [
        (moment, who)
        for start, end, who in entries
        for moment in (start + PROBE, start + (end - start) / 2, end - PROBE)
        if start <= moment < end
    ]

    def misses(elapsed: frozenset[str]) -> int:
        return sum(model.on_call(moment, elapsed) != who for moment, who in probes)

    chosen: frozenset[str] = frozenset()
    best = misses(chosen)
    for layer in model.layers:
        length = int(layer.get("rotation_turn_length_seconds") or 0)
        if best == 0 or length <= 0 or length % rotations.DAY_SECONDS:
            continue
        trial = chosen | {str(layer.get("id"))}
        count = misses(trial)
        if count < best:
            chosen, best = trial, count
    return chosen
