"""PagerDuty schedules as Tocsin schedules. Pure.

PagerDuty lists a schedule's layers highest first (Layer 3, Layer 2, Layer 1) and the highest
wins where layers overlap; Tocsin lists them lowest first with the last winning, so the list is
reversed. A layer is turns of `rotation_turn_length_seconds` counted from
`rotation_virtual_start` (chalicelib.client.importers.rotations); whole days hand off at the same
local time (the schedule's zone), other lengths count elapsed time. Restrictions are local
windows: daily (a start and a duration) or weekly (a day, a start and a duration)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from chalicelib.client import document as doc
from chalicelib.client.importers import rotations
from chalicelib.client.importers.context import Context
from chalicelib.client.importers.timezones import iana

MAX_LAYERS = 10
MAX_RESTRICTIONS = 14
WEEK_SECONDS = 7 * rotations.DAY_SECONDS


def when(value: Any) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _time_of_day(value: str) -> tuple[int, int]:
    """'HH:MM:SS' as (minutes after midnight, leftover seconds)."""
    parts = [int(part) for part in str(value).split(":")] + [0, 0]
    return parts[0] * 60 + parts[1], parts[2]


def _hhmm(minutes: int) -> str:
    minutes %= rotations.MINUTES_PER_DAY
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def restrictions_of(raw: list[dict[str, Any]]) -> tuple[list[doc.Restriction] | None, list[str]]:
    """Tocsin restrictions, and what differs. None: they leave no time at all."""
    found: list[doc.Restriction] = []
    differences: list[str] = []
    for item in raw:
        start, seconds = _time_of_day(item.get("start_time_of_day") or "00:00:00")
        duration = int(item.get("duration_seconds") or 0)
        if seconds or duration % 60:
            differences.append("a restriction has seconds: Tocsin's windows are whole minutes")
        length = duration // 60
        if length <= 0:
            continue
        if item.get("type") == "weekly_restriction":
            if duration >= WEEK_SECONDS:
                return [], differences  # the whole week: no restriction at all
            day = (int(item.get("start_day_of_week") or 1) - 1) % 7
            end = start + length
            found.append(
                doc.Restriction(
                    kind="weekly",
                    start=_hhmm(start),
                    end=_hhmm(end),
                    start_day=day,
                    end_day=(day + end // rotations.MINUTES_PER_DAY) % 7,
                )
            )
        else:
            if duration >= rotations.DAY_SECONDS:
                return [], differences
            found.append(doc.Restriction(kind="daily", start=_hhmm(start), end=_hhmm(start + length)))
    if raw and not found:
        return None, differences
    if len(found) > MAX_RESTRICTIONS:
        differences.append(f"more than {MAX_RESTRICTIONS} restrictions: the first {MAX_RESTRICTIONS} are kept")
        found = found[:MAX_RESTRICTIONS]
    return found, differences


def _layer(
    raw: dict[str, Any], schedule_name: str, zone: str, ctx: Context, absolute: bool
) -> tuple[list[doc.Layer], list[str]]:
    name = str(raw.get("name") or "Layer")
    where = f"{schedule_name} / {name}"
    start, end = when(raw.get("start")), when(raw.get("end"))
    if start is None:
        return [], [f"layer {name!r} has no start"]
    members = []
    for entry in raw.get("users") or []:
        user = entry.get("user", entry)
        email = ctx.users.get(str(user.get("id")))
        if email is None:
            ctx.notes.approximate(
                "schedule", where, str(user.get("id")), "a member who is not a user of the account is left out"
            )
            continue
        members.append(email)
    if not members:
        return [], [f"layer {name!r} lists nobody Tocsin can put on call"]
    restrictions, differences = restrictions_of(raw.get("restrictions") or [])
    if restrictions is None:
        return [], [f"layer {name!r}: its restrictions leave no time on call"]
    length = int(raw.get("rotation_turn_length_seconds") or rotations.DAY_SECONDS)
    virtual_start = when(raw.get("rotation_virtual_start")) or start
    days = length // rotations.DAY_SECONDS if length % rotations.DAY_SECONDS == 0 and not absolute else None
    turns = rotations.Turns(tuple(members), virtual_start, rotations.zone_of(zone), days, length)
    built = rotations.build(name, turns, start=start, end=end, restrictions=restrictions, now=ctx.now)
    return built.layers, [f"layer {name!r}: {text}" for text in differences + built.approximations]


def schedule_of(
    raw: dict[str, Any], ctx: Context, absolute_layers: frozenset[str] = frozenset()
) -> doc.Schedule | None:
    """The Tocsin schedule, or None (noted) when nothing of it can put anyone on call.
    `absolute_layers`: layer ids whose turns the vendor counts in elapsed time even when whole days."""
    vendor_id = str(raw["id"])
    label = str(raw.get("name") or vendor_id)
    zone = iana(raw.get("time_zone"))
    if zone is None:
        ctx.notes.skip("schedule", label, vendor_id, f"unknown time zone {raw.get('time_zone')!r}")
        return None
    layers: list[doc.Layer] = []
    differences: list[str] = []
    for layer in reversed(raw.get("schedule_layers") or []):
        end = when(layer.get("end"))
        if end is not None and end <= ctx.now:
            ctx.notes.skip("schedule", f"{label} / {layer.get('name')}", str(layer.get("id")), "the layer has ended")
            continue
        made, found = _layer(layer, label, zone, ctx, str(layer.get("id")) in absolute_layers)
        layers += made
        differences += found
    if len(layers) > MAX_LAYERS:
        differences.append(f"more than {MAX_LAYERS} layers: the {MAX_LAYERS} highest are kept")
        layers = layers[-MAX_LAYERS:]
    if not layers:
        ctx.notes.skip(
            "schedule", label, vendor_id, "; ".join(["no layer puts anyone on call from now on", *differences])
        )
        return None
    if differences:
        ctx.notes.approximate("schedule", label, vendor_id, "; ".join(differences))
    name = ctx.name("schedule", label, vendor_id)
    ctx.schedules[vendor_id] = name
    teams = [ctx.teams[str(team["id"])] for team in raw.get("teams") or [] if str(team.get("id")) in ctx.teams]
    return doc.Schedule(
        name=name,
        time_zone=zone,
        team=teams[0] if teams else None,
        layers=layers,
        overrides=_overrides(raw, label, ctx),
        source=ctx.source(vendor_id),
    )


def _overrides(raw: dict[str, Any], label: str, ctx: Context) -> list[doc.Override]:
    found: list[doc.Override] = []
    for override in raw.get("overrides") or []:
        start, end = when(override.get("start")), when(override.get("end"))
        user = override.get("user") or {}
        email = ctx.users.get(str(user.get("id")))
        if start is None or end is None or end <= ctx.now or end <= start:
            continue
        if email is None:
            ctx.notes.skip(
                "schedule_override",
                f"{label} {start.isoformat()}",
                str(override.get("id")),
                "its user is not a user of the account",
            )
            continue
        found.append(doc.Override(user=email, start=start, end=end))
    return sorted(found, key=lambda o: (o.start, o.end, o.user))


def horizon(now: datetime) -> tuple[datetime, datetime]:
    """The overrides an import reads: from now to a year ahead."""
    return now, now + timedelta(days=365)
