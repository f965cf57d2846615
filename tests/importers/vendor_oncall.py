"""Who the VENDOR has on call at an instant, written from the vendors' own descriptions and
independently of Tocsin's rotation code (chalicelib/oncall) and of the importer
(chalicelib/client/importers/rotations.py): the stand-ins answer with it, the tests compare
Tocsin's answer with it.

PagerDuty: a layer's turn k runs from rotation_virtual_start + k turns; whole-day turns hand off
at the virtual start's wall-clock time in the schedule's zone, others every turn length of
elapsed time. A restriction is a wall-clock window (start of day or week + duration). The first
layer PagerDuty lists is the highest and wins; an override wins over every layer.

Opsgenie: a rotation starts at startDate with its first participant and hands off every
`length` days or weeks at startDate's wall-clock time, or every `length` hours. Every rotation's
participant is on call at once; an override replaces them all (or those of its rotations)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _local_days_since(origin: datetime, moment: datetime, zone: ZoneInfo) -> int:
    """Whole local days from origin's wall-clock time to moment's (the day changes at origin's time of day)."""
    start, now = origin.astimezone(zone), moment.astimezone(zone)
    days = (now.date() - start.date()).days
    if (now.hour, now.minute, now.second) < (start.hour, start.minute, start.second):
        days -= 1
    return days


# --- PagerDuty ---------------------------------------------------------------------------------------


def _pd_allowed(restrictions: list[dict[str, Any]], zone: ZoneInfo, moment: datetime) -> bool:
    if not restrictions:
        return True
    local = moment.astimezone(zone)
    minute = local.hour * 60 + local.minute
    for item in restrictions:
        hours, minutes, *_ = (int(part) for part in item["start_time_of_day"].split(":"))
        begin, length = hours * 60 + minutes, int(item["duration_seconds"]) // 60
        if item["type"] == "daily_restriction":
            if (minute - begin) % 1440 < length:
                return True
        else:
            week_minute = local.weekday() * 1440 + minute
            week_begin = (int(item["start_day_of_week"]) - 1) * 1440 + begin
            if (week_minute - week_begin) % 10080 < length:
                return True
    return False


def pd_layer_user(layer: dict[str, Any], zone: ZoneInfo, moment: datetime, *, calendar: bool = True) -> str | None:
    start, end = parse(layer["start"]), parse(layer.get("end"))
    assert start is not None
    if moment < start or (end is not None and moment >= end):
        return None
    if not _pd_allowed(layer.get("restrictions") or [], zone, moment):
        return None
    origin = parse(layer["rotation_virtual_start"])
    assert origin is not None
    length = int(layer["rotation_turn_length_seconds"])
    if length % 86400 == 0 and calendar:
        turn = _local_days_since(origin, moment, zone) // (length // 86400)
    else:
        turn = int((moment - origin).total_seconds() // length)
    users = layer["users"]
    return str(users[turn % len(users)]["user"]["id"])


def pd_on_call(
    schedule: dict[str, Any], overrides: list[dict[str, Any]], moment: datetime, *, calendar: bool = True
) -> str | None:
    """The user id PagerDuty has on call for the schedule at `moment`, or None. `calendar=False`:
    a PagerDuty that counted whole-day turns in elapsed time (the importer must notice)."""
    covering = [o for o in overrides if parse(o["start"]) <= moment < parse(o["end"])]  # type: ignore[operator]
    if covering:
        return str(covering[-1]["user"]["id"])
    zone = ZoneInfo(schedule["time_zone"])
    for layer in schedule["schedule_layers"]:  # highest first
        user = pd_layer_user(layer, zone, moment, calendar=calendar)
        if user is not None:
            return user
    return None


# --- Opsgenie ----------------------------------------------------------------------------------------


def _og_allowed(restriction: dict[str, Any] | None, zone: ZoneInfo, moment: datetime) -> bool:
    if not restriction:
        return True
    local = moment.astimezone(zone)
    minute = local.hour * 60 + local.minute
    if restriction["type"] == "time-of-day":
        part = restriction["restriction"]
        begin = int(part["startHour"]) * 60 + int(part["startMin"])
        finish = int(part["endHour"]) * 60 + int(part["endMin"])
        return (minute - begin) % 1440 < ((finish - begin) % 1440 or 1440)
    week_minute = local.weekday() * 1440 + minute
    for part in restriction["restrictions"]:
        begin = WEEKDAYS.index(part["startDay"]) * 1440 + part["startHour"] * 60 + part["startMin"]
        finish = WEEKDAYS.index(part["endDay"]) * 1440 + part["endHour"] * 60 + part["endMin"]
        if (week_minute - begin) % 10080 < ((finish - begin) % 10080 or 10080):
            return True
    return False


def og_rotation_user(rotation: dict[str, Any], zone: ZoneInfo, moment: datetime) -> str | None:
    start, end = parse(rotation["startDate"]), parse(rotation.get("endDate"))
    assert start is not None
    if moment < start or (end is not None and moment >= end):
        return None
    if not _og_allowed(rotation.get("timeRestriction"), zone, moment):
        return None
    length = int(rotation.get("length") or 1)
    if rotation["type"] == "hourly":
        turn = int((moment - start).total_seconds() // (3600 * length))
    else:
        turn = _local_days_since(start, moment, zone) // (length * (7 if rotation["type"] == "weekly" else 1))
    participant = rotation["participants"][turn % len(rotation["participants"])]
    return str(participant["username"]) if participant.get("type") == "user" else None


def og_on_call(schedule: dict[str, Any], overrides: list[dict[str, Any]], moment: datetime) -> list[str]:
    """The usernames Opsgenie has on call for the schedule at `moment` (every rotation's)."""
    zone = ZoneInfo(schedule["timezone"])
    covering = [o for o in overrides if parse(o["startDate"]) <= moment < parse(o["endDate"])]  # type: ignore[operator]
    found: list[str] = []
    overridden = {str(r.get("name")) for o in covering for r in o.get("rotations") or []}
    whole = [o for o in covering if not o.get("rotations")]
    if whole:
        return [str(whole[-1]["user"]["username"])]
    for rotation in schedule["rotations"]:
        if rotation["name"] in overridden:
            override = next(o for o in covering if rotation["name"] in {r.get("name") for r in o["rotations"]})
            user: str | None = str(override["user"]["username"])
        else:
            user = og_rotation_user(rotation, zone, moment)
        if user is not None and user not in found:
            found.append(user)
    return found


# --- rendered timelines (the stand-ins' final schedules) -----------------------------------------------


def change_points(since: datetime, until: datetime, extra: list[datetime]) -> list[datetime]:
    """Candidate instants where on call may change: every half hour of UTC (every zone's handoffs and
    windows in the test account fall on local half hours) and the given edges."""
    first = since.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    points = {since}
    moment = first
    while moment < until:
        if moment > since:
            points.add(moment)
        moment += timedelta(minutes=30)
    points.update(p for p in extra if since < p < until)
    return sorted(points)


def entries(
    answer: Any, since: datetime, until: datetime, extra: list[datetime]
) -> list[tuple[datetime, datetime, Any]]:
    """[(start, end, who)] over [since, until): `answer(moment)` at each change point, merged."""
    out: list[tuple[datetime, datetime, Any]] = []
    points = change_points(since, until, extra)
    for index, point in enumerate(points):
        end = points[index + 1] if index + 1 < len(points) else until
        who = answer(point)
        if out and out[-1][2] == who and out[-1][1] == point:
            out[-1] = (out[-1][0], end, who)
        else:
            out.append((point, end, who))
    return [item for item in out if item[2]]
