"""What makes a schedule usable: `validate_schedule` and friends. Pure.

Every problem is collected and raised once as ValidationFailed with `details.fields` listing
`{field, message}` pairs (field paths such as `layers.0.restrictions.1.end`).
"""

from __future__ import annotations

from chalicelib.errors import ValidationFailed
from chalicelib.oncall.fields import moment_problem
from chalicelib.oncall.schedule import (
    CUSTOM_HOURS_MAX,
    CUSTOM_HOURS_MIN,
    DAYS_IN_WEEK,
    ID_MAX,
    MAX_LAYERS,
    MAX_MEMBERS,
    MAX_OVERRIDES,
    MAX_RESTRICTIONS,
    NAME_MAX,
    ROTATIONS,
    Layer,
    Override,
    Restriction,
    Schedule,
)
from chalicelib.oncall.wallclock import is_hhmm, is_valid_zone, minutes_of


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


Problems = list[dict[str, str]]


def _problem(problems: Problems, where: str, message: str) -> None:
    problems.append({"field": where, "message": message})


def _check_id(problems: Problems, value: object, where: str) -> None:
    if not isinstance(value, str) or not value.strip() or len(value) > ID_MAX:
        _problem(problems, where, f"must be a non-empty string of at most {ID_MAX} characters")


def _check_name(problems: Problems, value: object, where: str) -> None:
    if not isinstance(value, str) or not value.strip() or len(value) > NAME_MAX:
        _problem(problems, where, f"must be 1 to {NAME_MAX} characters")


def _check_moment(problems: Problems, value: object, where: str) -> None:
    message = moment_problem(value)
    if message:
        _problem(problems, where, message)


def restriction_problems(restriction: Restriction, where: str) -> Problems:
    problems: Problems = []
    for name in ("start", "end"):
        if not is_hhmm(getattr(restriction, name)):
            _problem(problems, _join(where, name), "must be a local time HH:MM (00:00 to 23:59)")
    if restriction.kind == "daily":
        for name in ("start_day", "end_day"):
            if getattr(restriction, name) is not None:
                _problem(problems, _join(where, name), "is only for weekly restrictions")
        if not problems and restriction.start == restriction.end:
            _problem(problems, _join(where, "end"), "must differ from start (leave restrictions out for all day)")
    elif restriction.kind == "weekly":
        for name in ("start_day", "end_day"):
            day = getattr(restriction, name)
            if isinstance(day, bool) or not isinstance(day, int) or not 0 <= day < DAYS_IN_WEEK:
                _problem(problems, _join(where, name), "must be a weekday from 0 (Monday) to 6 (Sunday)")
        if not problems and (restriction.start_day, minutes_of(restriction.start)) == (
            restriction.end_day,
            minutes_of(restriction.end),
        ):
            _problem(problems, _join(where, "end"), "must differ from the start (leave restrictions out for all week)")
    else:
        _problem(problems, _join(where, "kind"), "must be daily or weekly")
    return problems


def layer_problems(layer: Layer, where: str = "") -> Problems:
    problems: Problems = []
    _check_id(problems, layer.layer_id, _join(where, "layer_id"))
    _check_name(problems, layer.name, _join(where, "name"))
    if not 1 <= len(layer.members) <= MAX_MEMBERS:
        _problem(problems, _join(where, "members"), f"must list 1 to {MAX_MEMBERS} user ids")
    for index, member in enumerate(layer.members):
        _check_id(problems, member, _join(where, f"members.{index}"))
    hours = layer.rotation_hours
    if layer.rotation not in ROTATIONS:
        _problem(problems, _join(where, "rotation"), f"must be one of {', '.join(ROTATIONS)}")
    elif layer.rotation == "custom":
        if isinstance(hours, bool) or not isinstance(hours, int) or not CUSTOM_HOURS_MIN <= hours <= CUSTOM_HOURS_MAX:
            _problem(
                problems,
                _join(where, "rotation_hours"),
                f"must be an integer from {CUSTOM_HOURS_MIN} to {CUSTOM_HOURS_MAX} for a custom rotation",
            )
    elif hours is not None:
        _problem(problems, _join(where, "rotation_hours"), "is only for custom rotations")
    if not is_hhmm(layer.handoff_time):
        _problem(problems, _join(where, "handoff_time"), "must be a local time HH:MM (00:00 to 23:59)")
    _check_moment(problems, layer.start, _join(where, "start"))
    if layer.end is not None:
        _check_moment(problems, layer.end, _join(where, "end"))
        if not moment_problem(layer.start) and not moment_problem(layer.end) and layer.end <= layer.start:
            _problem(problems, _join(where, "end"), "must be after start")
    if len(layer.restrictions) > MAX_RESTRICTIONS:
        _problem(problems, _join(where, "restrictions"), f"at most {MAX_RESTRICTIONS} restrictions")
    for index, restriction in enumerate(layer.restrictions):
        problems.extend(restriction_problems(restriction, _join(where, f"restrictions.{index}")))
    return problems


def override_problems(override: Override, where: str = "") -> Problems:
    problems: Problems = []
    _check_id(problems, override.override_id, _join(where, "override_id"))
    _check_id(problems, override.user_id, _join(where, "user_id"))
    _check_moment(problems, override.start, _join(where, "start"))
    _check_moment(problems, override.end, _join(where, "end"))
    if not moment_problem(override.start) and not moment_problem(override.end) and override.end <= override.start:
        _problem(problems, _join(where, "end"), "must be after start")
    return problems


def validate_override(override: Override) -> None:
    problems = override_problems(override)
    if problems:
        raise ValidationFailed.for_fields(problems, "The override is invalid.")


def validate_schedule(schedule: Schedule) -> None:
    """ValidationFailed (details.fields lists every problem) unless the schedule is usable."""
    problems: Problems = []
    _check_id(problems, schedule.schedule_id, "schedule_id")
    _check_name(problems, schedule.name, "name")
    if schedule.team_id is not None:
        _check_id(problems, schedule.team_id, "team_id")
    if not is_valid_zone(schedule.time_zone):
        _problem(problems, "time_zone", "must be an IANA time zone such as Europe/Berlin or America/New_York")
    if not 1 <= len(schedule.layers) <= MAX_LAYERS:
        _problem(problems, "layers", f"must hold 1 to {MAX_LAYERS} layers")
    seen: set[str] = set()
    for index, layer in enumerate(schedule.layers):
        problems.extend(layer_problems(layer, f"layers.{index}"))
        if layer.layer_id in seen:
            _problem(problems, f"layers.{index}.layer_id", "must be unique within the schedule")
        seen.add(layer.layer_id)
    if len(schedule.overrides) > MAX_OVERRIDES:
        _problem(problems, "overrides", f"at most {MAX_OVERRIDES} overrides")
    seen = set()
    for index, override in enumerate(schedule.overrides):
        problems.extend(override_problems(override, f"overrides.{index}"))
        if override.override_id in seen:
            _problem(problems, f"overrides.{index}.override_id", "must be unique within the schedule")
        seen.add(override.override_id)
    if problems:
        raise ValidationFailed.for_fields(problems, "The schedule is invalid.")
