"""Opsgenie schedules as Tocsin schedules. Pure.

A rotation starts at `startDate` with its first participant and hands off every `length` days
(daily), weeks (weekly) at the start's local time, or every `length` hours of elapsed time
(hourly); a time restriction limits it to local windows every day (time-of-day) or on given
days (weekday-and-time-of-day). Opsgenie puts the participant of EVERY rotation on call at once;
a Tocsin schedule has one person on call at a time (the last layer with a shift wins), so where
two rotations overlap the later one is on call, and the plan says so."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib.client import document as doc
from chalicelib.client.importers import rotations
from chalicelib.client.importers.context import Context
from chalicelib.client.importers.timezones import iana

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MAX_LAYERS = 10


def when(value: Any) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _hhmm(hour: Any, minute: Any) -> str:
    return f"{int(hour or 0) % 24:02d}:{int(minute or 0) % 60:02d}"


def restrictions_of(raw: dict[str, Any] | None) -> list[doc.Restriction] | None:
    """Tocsin restrictions for a time restriction; [] for none at all; None: no time left."""
    if not raw:
        return []
    if raw.get("type") == "time-of-day":
        part = raw.get("restriction") or {}
        start, end = _hhmm(part.get("startHour"), part.get("startMin")), _hhmm(part.get("endHour"), part.get("endMin"))
        return [] if start == end else [doc.Restriction(kind="daily", start=start, end=end)]
    found: list[doc.Restriction] = []
    for part in raw.get("restrictions") or []:
        start, end = _hhmm(part.get("startHour"), part.get("startMin")), _hhmm(part.get("endHour"), part.get("endMin"))
        first = WEEKDAYS.index(str(part.get("startDay", "monday")).lower())
        last = WEEKDAYS.index(str(part.get("endDay", "monday")).lower())
        if (first, start) == (last, end):
            return []  # a whole week
        found.append(doc.Restriction(kind="weekly", start=start, end=end, start_day=first, end_day=last))
    return found or None


def _participants(rotation: dict[str, Any], where: str, ctx: Context) -> list[str]:
    members: list[str] = []
    for participant in rotation.get("participants") or []:
        kind = str(participant.get("type"))
        email = ctx.users.get(str(participant.get("id"))) or ctx.users.get(str(participant.get("username")).lower())
        if kind == "user" and email is not None:
            members.append(email)
            continue
        what = {"none": "an empty turn (none)", "team": "a team", "escalation": "an escalation"}.get(kind, kind)
        ctx.notes.approximate(
            "schedule",
            where,
            str(rotation.get("id")),
            f"{what} among the participants is left out, so the others' turns move up: a Tocsin layer rotates people",
            "a layer per person with restrictions",
        )
    return members


def _layers(rotation: dict[str, Any], label: str, zone: str, ctx: Context) -> list[doc.Layer]:
    name = str(rotation.get("name") or "Rotation")
    where = f"{label} / {name}"
    start, end = when(rotation.get("startDate")), when(rotation.get("endDate"))
    if start is None or (end is not None and end <= ctx.now):
        if start is not None:
            ctx.notes.skip("schedule", where, str(rotation.get("id")), "the rotation has ended")
        return []
    members = _participants(rotation, where, ctx)
    restrictions = restrictions_of(rotation.get("timeRestriction"))
    if not members or restrictions is None:
        ctx.notes.skip("schedule", where, str(rotation.get("id")), "the rotation puts nobody Tocsin knows on call")
        return []
    length = max(1, int(rotation.get("length") or 1))
    kind = rotation.get("type") or "weekly"
    days = {"daily": length, "weekly": 7 * length}.get(str(kind))
    seconds = (days * rotations.DAY_SECONDS) if days is not None else length * 3600
    turns = rotations.Turns(tuple(members), start, rotations.zone_of(zone), days, seconds)
    built = rotations.build(name, turns, start=start, end=end, restrictions=restrictions, now=ctx.now)
    if built.approximations:
        ctx.notes.approximate("schedule", where, str(rotation.get("id")), "; ".join(built.approximations))
    return built.layers


def _overlaps(rotations_raw: list[dict[str, Any]], layers_of: dict[str, list[doc.Layer]]) -> list[tuple[str, str]]:
    """Pairs of rotations (earlier, later) that can both be on call at one instant."""
    pairs = []
    kept = [r for r in rotations_raw if layers_of.get(str(r.get("id")))]
    for index, first in enumerate(kept):
        for second in kept[index + 1 :]:
            a, b = layers_of[str(first.get("id"))], layers_of[str(second.get("id"))]
            a_end = (
                max((layer.end for layer in a if layer.end), default=None) if all(layer.end for layer in a) else None
            )
            b_end = (
                max((layer.end for layer in b if layer.end), default=None) if all(layer.end for layer in b) else None
            )
            a_start, b_start = min(layer.start for layer in a), min(layer.start for layer in b)
            if (a_end is not None and a_end <= b_start) or (b_end is not None and b_end <= a_start):
                continue
            if rotations.spans_overlap(
                rotations.weekly_spans(a[-1].restrictions), rotations.weekly_spans(b[-1].restrictions)
            ):
                pairs.append((str(first.get("name")), str(second.get("name"))))
    return pairs


def schedule_of(raw: dict[str, Any], ctx: Context) -> doc.Schedule | None:
    vendor_id = str(raw["id"])
    label = str(raw.get("name") or vendor_id)
    zone = iana(raw.get("timezone")) or ("UTC" if not raw.get("timezone") else None)
    if zone is None:
        ctx.notes.skip("schedule", label, vendor_id, f"unknown time zone {raw.get('timezone')!r}")
        return None
    rotations_raw = list(raw.get("rotations") or [])
    layers_of = {str(r.get("id")): _layers(r, label, zone, ctx) for r in rotations_raw}
    layers = [layer for r in rotations_raw for layer in layers_of[str(r.get("id"))]]
    for earlier, later in _overlaps(rotations_raw, layers_of):
        ctx.notes.approximate(
            "schedule",
            label,
            vendor_id,
            f"rotations {earlier!r} and {later!r} overlap: Opsgenie has both people on call, a Tocsin schedule "
            f"one, {later!r} (the later rotation)",
            "a second schedule for the earlier rotation, added to the same escalation level",
        )
    if len(layers) > MAX_LAYERS:
        ctx.notes.approximate("schedule", label, vendor_id, f"more than {MAX_LAYERS} rotations: the last kept")
        layers = layers[-MAX_LAYERS:]
    if not layers:
        ctx.notes.skip("schedule", label, vendor_id, "no rotation puts anyone on call from now on")
        return None
    if raw.get("enabled") is False:
        ctx.notes.approximate(
            "schedule",
            label,
            vendor_id,
            "disabled at Opsgenie; Tocsin schedules have no off switch",
            "no policy targets it",
        )
    name = ctx.name("schedule", label, vendor_id)
    ctx.schedules[vendor_id] = name
    team_id = str((raw.get("ownerTeam") or {}).get("id"))
    return doc.Schedule(
        name=name,
        time_zone=zone,
        team=ctx.teams.get(team_id),
        layers=layers,
        overrides=_overrides(raw, label, ctx),
        source=ctx.source(vendor_id),
    )


def _overrides(raw: dict[str, Any], label: str, ctx: Context) -> list[doc.Override]:
    found: list[doc.Override] = []
    for override in raw.get("overrides") or []:
        start, end = when(override.get("startDate")), when(override.get("endDate"))
        if start is None or end is None or end <= ctx.now or end <= start:
            continue
        user = override.get("user") or {}
        email = ctx.users.get(str(user.get("id"))) or ctx.users.get(str(user.get("username")).lower())
        alias = str(override.get("alias") or start.isoformat())
        if user.get("type") != "user" or email is None:
            ctx.notes.skip(
                "schedule_override",
                f"{label} {alias}",
                alias,
                "it puts nobody (or someone not carried over) on call",
                "an override for a person",
            )
            continue
        if override.get("rotations"):
            ctx.notes.approximate(
                "schedule_override",
                f"{label} {alias}",
                alias,
                "limited to some rotations: Tocsin's covers the schedule",
            )
        found.append(doc.Override(user=email, start=start, end=end))
    return sorted(found, key=lambda o: (o.start, o.end, o.user))
