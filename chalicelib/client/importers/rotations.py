"""Vendor rotations as Tocsin layers (chalicelib.client.document.Layer), exactly where the models
meet. Pure.

A vendor rotation is turns: turn k runs from boundary k to boundary k+1 and belongs to
members[k % n]. Two cadences:

- calendar: a turn is a whole number of local days, handoffs at the same wall-clock time (a
  daily or weekly rotation, or one of 2 days, 2 weeks...). Tocsin's daily and weekly rotations
  hand off at a local time too, one member per day or week, so a turn of d days becomes a daily
  rotation (a weekly one when d is a multiple of 7) listing each member d (or d/7) times in a row.
- absolute: every `seconds` of elapsed time from the origin (hourly turns, 12-hour turns).
  Tocsin's custom rotation counts whole hours of elapsed time from its first handoff.

Tocsin's layer starts with its first member. A daily layer hands off at HH:MM every day, so it
can start anywhere: at the vendor layer's own start, the member list rotated to whoever the
vendor has on at that instant. A weekly layer hands off on its start's weekday and a custom one
counts from its start, so those start on a vendor boundary: the last one at or before the
vendor layer's start when that start is past (what comes before it is history), or, for a layer
that starts later, a one-member lead-in layer covers the start up to the first boundary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo

from chalicelib.client import document as doc

MAX_MEMBERS = 50  # a Tocsin layer's member list
MAX_CUSTOM_HOURS = 8760
DAY_SECONDS = 86400
WEEK_DAYS = 7
MINUTES_PER_DAY = 1440
MINUTES_PER_WEEK = WEEK_DAYS * MINUTES_PER_DAY


def local_instant(zone: tzinfo, day: date, clock: time) -> datetime:
    """The instant the wall clock in `zone` shows `clock` on `day` (its first occurrence)."""
    return datetime.combine(day, clock).replace(tzinfo=zone, fold=0).astimezone(UTC)


def hhmm(moment: datetime, zone: tzinfo) -> str:
    return moment.astimezone(zone).strftime("%H:%M")


@dataclass(frozen=True)
class Turns:
    """A vendor rotation's turns: boundary k and the member of turn k."""

    members: tuple[str, ...]
    origin: datetime  # boundary 0, aware
    zone: tzinfo
    days: int | None  # calendar turns of this many local days; None: absolute
    seconds: int  # the turn's length (calendar: days * 86400, nominal)

    def boundary(self, k: int) -> datetime:
        if self.days is None:
            return self.origin.astimezone(UTC) + k * timedelta(seconds=self.seconds)
        local = self.origin.astimezone(self.zone)
        return local_instant(self.zone, local.date() + timedelta(days=k * self.days), local.time().replace(fold=0))

    def index_at(self, moment: datetime) -> int:
        """The turn covering `moment` (negative before the origin)."""
        if self.days is None:
            return (moment.astimezone(UTC) - self.origin.astimezone(UTC)) // timedelta(seconds=self.seconds)
        elapsed = (moment.astimezone(self.zone).date() - self.origin.astimezone(self.zone).date()).days
        k = elapsed // self.days
        while self.boundary(k) > moment:
            k -= 1
        while self.boundary(k + 1) <= moment:
            k += 1
        return k

    def member_at(self, moment: datetime) -> str:
        return self.members[self.index_at(moment) % len(self.members)]


@dataclass
class Built:
    """The layers made of one vendor rotation (a lead-in and the rotation), and what differs."""

    layers: list[doc.Layer] = field(default_factory=list)
    approximations: list[str] = field(default_factory=list)


def _rotated(members: list[str], by: int) -> list[str]:
    shift = by % len(members)
    return members[shift:] + members[:shift]


def _units(turns: Turns) -> tuple[Turns, list[str], str]:
    """The rotation in Tocsin's units: one day or one week per member entry (calendar), or the
    turn itself (absolute); the expanded member list; the Tocsin rotation kind."""
    if turns.days is not None:
        step = WEEK_DAYS if turns.days % WEEK_DAYS == 0 else 1
        repeat = turns.days // step
        expanded = [member for member in turns.members for _ in range(repeat)]
        unit = Turns(tuple(expanded), turns.origin, turns.zone, step, step * DAY_SECONDS)
        return unit, expanded, "weekly" if step == WEEK_DAYS else "daily"
    return turns, list(turns.members), "custom"


def build(
    name: str,
    turns: Turns,
    *,
    start: datetime,
    end: datetime | None,
    restrictions: list[doc.Restriction],
    now: datetime,
) -> Built:
    """The Tocsin layers for the vendor layer `name` that starts at `start` and ends at `end`."""
    built = Built()
    if turns.days is not None and len(turns.members) * (turns.days // 7 if turns.days % 7 == 0 else turns.days) > (
        MAX_MEMBERS
    ):
        # Too many entries to spell the turn out day by day: count it in elapsed hours instead.
        built.approximations.append(
            f"turns of {turns.days} days for {len(turns.members)} people would list more than {MAX_MEMBERS} "
            "members: counted as elapsed hours, so handoffs move by an hour across a daylight saving change"
        )
        turns = Turns(turns.members, turns.origin, turns.zone, None, turns.days * DAY_SECONDS)
    if turns.days is None and (turns.seconds % 3600 or turns.seconds > MAX_CUSTOM_HOURS * 3600):
        whole = min(MAX_CUSTOM_HOURS, max(1, round(turns.seconds / 3600)))
        built.approximations.append(
            f"turns of {turns.seconds // 60} minutes: Tocsin's turns are whole hours (1 to {MAX_CUSTOM_HOURS}); "
            f"made {whole} hour(s)"
        )
        turns = Turns(turns.members, turns.origin, turns.zone, None, whole * 3600)
    origin = turns.origin
    if origin.second or origin.microsecond:
        built.approximations.append("handoff time has seconds: Tocsin hands off on the minute")
        turns = Turns(turns.members, origin.replace(second=0, microsecond=0), turns.zone, turns.days, turns.seconds)
    unit, expanded, rotation = _units(turns)
    rotation_hours = unit.seconds // 3600 if rotation == "custom" else None
    clock = hhmm(unit.origin, unit.zone)
    first = unit.index_at(start)

    def layer(layer_name: str, members: list[str], layer_start: datetime, layer_end: datetime | None) -> doc.Layer:
        # Calendar handoffs keep the origin's wall-clock time; elapsed ones count from the layer's
        # start (a boundary), whose wall-clock time may differ from the origin's across DST.
        return doc.Layer(
            name=layer_name,
            members=members,
            rotation=rotation,
            rotation_hours=rotation_hours,
            handoff_time=hhmm(layer_start, unit.zone) if rotation == "custom" else clock,
            start=layer_start.astimezone(UTC),
            end=layer_end.astimezone(UTC) if layer_end is not None else None,
            restrictions=restrictions,
        )

    if rotation == "daily":
        built.layers.append(layer(name, _rotated(expanded, first), start, end))
        return built
    on_boundary = unit.boundary(first) == start.astimezone(UTC)
    if on_boundary or start <= now:
        built.layers.append(layer(name, _rotated(expanded, first), unit.boundary(first), end))
        return built
    # A layer that starts later, between two boundaries: the first member until the first handoff.
    handoff = unit.boundary(first + 1)
    lead_end = handoff if end is None else min(handoff, end)
    built.layers.append(layer(f"{name} (until its first handoff)", [expanded[first % len(expanded)]], start, lead_end))
    if end is None or handoff < end:
        built.layers.append(layer(name, _rotated(expanded, first + 1), handoff, end))
    return built


# --- restrictions as weekly minute spans (overlap checks) ---------------------------------------------


def weekly_spans(restrictions: list[doc.Restriction]) -> list[tuple[int, int]]:
    """The minutes of the week (Monday 00:00 = 0) a layer may cover; no restrictions: all week.
    Spans may run past the week's end (they wrap)."""
    if not restrictions:
        return [(0, MINUTES_PER_WEEK)]
    spans: list[tuple[int, int]] = []
    for restriction in restrictions:
        start = _minutes(restriction.start)
        end = _minutes(restriction.end)
        if restriction.kind == "daily":
            length = (end - start) % MINUTES_PER_DAY or MINUTES_PER_DAY
            spans += [(day * MINUTES_PER_DAY + start, day * MINUTES_PER_DAY + start + length) for day in range(7)]
        else:
            lo = (restriction.start_day or 0) * MINUTES_PER_DAY + start
            hi = (restriction.end_day or 0) * MINUTES_PER_DAY + end
            spans.append((lo, lo + ((hi - lo) % MINUTES_PER_WEEK or MINUTES_PER_WEEK)))
    return spans


def spans_overlap(first: list[tuple[int, int]], second: list[tuple[int, int]]) -> bool:
    def unwrapped(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for lo, hi in spans:
            out += [(lo, min(hi, MINUTES_PER_WEEK))] if hi <= MINUTES_PER_WEEK else [(lo, MINUTES_PER_WEEK)]
            if hi > MINUTES_PER_WEEK:
                out.append((0, hi - MINUTES_PER_WEEK))
        return out

    return any(a_lo < b_hi and b_lo < a_hi for a_lo, a_hi in unwrapped(first) for b_lo, b_hi in unwrapped(second))


def _minutes(value: str) -> int:
    hours, minutes = value.split(":")
    return int(hours) * 60 + int(minutes)


def zone_of(name: str) -> ZoneInfo:
    return ZoneInfo(name)
