"""The schedule editor's form: what it posts, read into layers; its buttons; the domain's problems
named by its inputs and labels. Pure, no AWS.

The editor works without script: every button posts the whole form, and the page comes back with
the change made (a layer added, removed or moved, a preview of the shifts) and nothing saved,
until "Save". Each layer has one select per member in rotation order plus a blank one (choosing a
person there adds them; choosing the blank removes one), and its restriction rows plus a blank one
(a kind adds a restriction). Layer times are typed in the schedule's zone (`local_moment`).

Inputs: `name`, `time_zone`, `team_id`, `lead`, `version`, `layers` (how many), and per layer `n`
(1-based): `layer<n>_id`, `_name`, `_member` (repeated, in order), `_rotation`, `_hours`,
`_handoff`, `_start`, `_end`, and per restriction row the parallel `_rkind`, `_rstartday`,
`_rstart`, `_rendday`, `_rend`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, tzinfo
from typing import cast

from chalicelib.console.schedule_view import local_input, local_moment
from chalicelib.errors import ValidationFailed
from chalicelib.oncall.schedule import Layer, Restriction, RestrictionKind, Rotation, Schedule
from chalicelib.oncall.wallclock import is_valid_zone, zone_for

ROTATIONS: tuple[tuple[str, str], ...] = (
    ("daily", "Daily"),
    ("weekly", "Weekly"),
    ("hourly", "Hourly"),
    ("custom", "Every N hours"),
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MAX_FORM_LAYERS = 10
MAX_FORM_ROWS = 50
OPS = ("preview", "save", "add_layer", "remove_layer", "layer_up", "layer_down")
_NO_START = datetime(1970, 1, 1, tzinfo=UTC)
_LAYER_PATH = re.compile(r"^layers\.(\d+)(?:\.([a-z_]+))?(?:\.(\d+))?")
LABELS = {
    "name": "Name",
    "time_zone": "Time zone",
    "team_id": "Team",
    "handoff_notice_lead_minutes": "Tell people before their shifts (minutes)",
    "layers": "Layers",
}
LAYER_INPUTS = {
    "layer_id": ("name", "Name"),
    "name": ("name", "Name"),
    "members": ("member", "Members"),
    "rotation": ("rotation", "Rotation"),
    "rotation_hours": ("hours", "Hours per turn"),
    "handoff_time": ("handoff", "Hand-off time"),
    "start": ("start", "First turn starts"),
    "end": ("end", "Ends"),
}


@dataclass
class RestrictionRow:
    kind: str = ""  # "" (none: the blank row), daily or weekly
    start_day: str = "0"
    start: str = "09:00"
    end_day: str = "4"
    end: str = "17:00"


@dataclass
class LayerRow:
    layer_id: str = ""
    name: str = ""
    members: list[str] = field(default_factory=list)
    rotation: str = "weekly"
    hours: str = ""
    handoff: str = "09:00"
    start: str = ""
    end: str = ""
    restrictions: list[RestrictionRow] = field(default_factory=list)


@dataclass
class ScheduleForm:
    name: str = ""
    time_zone: str = "UTC"
    team_id: str = ""
    lead: str = "0"
    version: str = ""
    layers: list[LayerRow] = field(default_factory=list)

    @property
    def zone(self) -> tzinfo:
        """The zone the layers' times are typed in: the form's, when it is one."""
        return zone_for(self.time_zone if is_valid_zone(self.time_zone) else "UTC")


def blank_layer(number: int, start: str) -> LayerRow:
    return LayerRow(name=f"Layer {number}", start=start)


def form_of(schedule: Schedule | None, *, version: int | None, lead: int, now: datetime, zone: str) -> ScheduleForm:
    """The form for a stored schedule, or for a new one (one layer starting at the next hour)."""
    if schedule is None:
        start = local_input((now + timedelta(hours=1)).replace(minute=0, second=0, microsecond=0), zone_for(zone))
        return ScheduleForm(time_zone=zone, layers=[blank_layer(1, start)])
    tz = zone_for(schedule.time_zone)
    layers = [
        LayerRow(
            layer_id=layer.layer_id,
            name=layer.name,
            members=list(layer.members),
            rotation=layer.rotation,
            hours=str(layer.rotation_hours or ""),
            handoff=layer.handoff_time,
            start=local_input(layer.start, tz),
            end=local_input(layer.end, tz) if layer.end is not None else "",
            restrictions=[
                RestrictionRow(r.kind, str(r.start_day or 0), r.start, str(r.end_day or 0), r.end)
                for r in layer.restrictions
            ],
        )
        for layer in schedule.layers
    ]
    return ScheduleForm(
        schedule.name, schedule.time_zone, schedule.team_id or "", str(lead), str(version or ""), layers
    )


def _count(posted: Mapping[str, list[str]], name: str, most: int) -> int:
    try:
        return max(0, min(int((posted.get(name) or ["0"])[0]), most))
    except ValueError:
        return 0


def read_form(posted: Mapping[str, list[str]]) -> ScheduleForm:
    """The form as posted (blank member selects and restriction rows dropped)."""

    def one(name: str) -> str:
        return (posted.get(name) or [""])[0].strip()

    def many(name: str) -> list[str]:
        return [value.strip() for value in posted.get(name, [])][:MAX_FORM_ROWS]

    layers = []
    for n in range(1, _count(posted, "layers", MAX_FORM_LAYERS + 1) + 1):
        key = f"layer{n}_"
        columns = [many(key + part) for part in ("rkind", "rstartday", "rstart", "rendday", "rend")]
        rows = [RestrictionRow(*cells) for cells in zip(*columns, strict=False) if cells[0]]
        layers.append(
            LayerRow(
                layer_id=one(key + "id"),
                name=one(key + "name"),
                members=[member for member in many(key + "member") if member],
                rotation=one(key + "rotation"),
                hours=one(key + "hours"),
                handoff=one(key + "handoff"),
                start=one(key + "start"),
                end=one(key + "end"),
                restrictions=rows,
            )
        )
    return ScheduleForm(one("name"), one("time_zone"), one("team_id"), one("lead"), one("version"), layers)


def parse_op(value: str) -> tuple[str, int]:
    """A button's value: `preview`, `save`, `add_layer`, `remove_layer:2`; unknown ones preview."""
    name, _, number = value.partition(":")
    if name not in OPS:
        return "preview", 0
    return name, int(number) if number.isdigit() else 0


def apply_op(form: ScheduleForm, op: str, number: int, start: str) -> ScheduleForm:
    """The form after a button that changes its rows (nothing saved)."""
    layers = list(form.layers)
    index = number - 1
    if op == "add_layer" and len(layers) < MAX_FORM_LAYERS:
        layers.append(blank_layer(len(layers) + 1, start))
    elif op == "remove_layer" and 0 <= index < len(layers):
        del layers[index]
    elif op == "layer_up" and 0 < index < len(layers):
        layers[index - 1], layers[index] = layers[index], layers[index - 1]
    elif op == "layer_down" and 0 <= index < len(layers) - 1:
        layers[index], layers[index + 1] = layers[index + 1], layers[index]
    return replace(form, layers=layers)


@dataclass(frozen=True)
class Built:
    """The layers the form describes, and which form row each of their restrictions came from."""

    layers: list[Layer]
    restriction_rows: list[list[int]]  # per layer: the 1-based form row of each restriction


def _day(value: str) -> int | None:
    return int(value) if value.isdigit() else None


def build_layers(form: ScheduleForm, people: Collection[str], new_id: Callable[[], str]) -> Built:
    """Domain layers from the form; ValidationFailed (named by the form's inputs) for what cannot be
    read. What can be read but is wrong (a handoff at 25:00) is the domain's to refuse."""
    problems: list[dict[str, str]] = []
    layers: list[Layer] = []
    rows: list[list[int]] = []
    zone = form.zone
    for n, row in enumerate(form.layers, start=1):
        key = f"layer{n}_"
        unknown = [member for member in row.members if member not in people]
        if unknown:
            problems.append(
                problem(key + "member", f"Layer {n}: Members", "choose people of this organization who can respond")
            )
        moments: dict[str, datetime | None] = {"start": None, "end": None}
        for name in ("start", "end"):
            value = getattr(row, name)
            if not value and name == "end":
                continue
            try:
                moments[name] = local_moment(value, zone, field=name)
            except ValidationFailed as error:
                message = _first_message(error)
                problems.append(problem(key + name, f"Layer {n}: {LAYER_INPUTS[name][1]}", message))
        hours = int(row.hours) if row.rotation == "custom" and row.hours.isdigit() else None
        if row.rotation == "custom" and hours is None:
            problems.append(problem(key + "hours", f"Layer {n}: Hours per turn", "a whole number of hours, 1 to 8760"))
        restrictions = [
            Restriction(
                cast(RestrictionKind, r.kind),
                r.start,
                r.end,
                _day(r.start_day) if r.kind == "weekly" else None,
                _day(r.end_day) if r.kind == "weekly" else None,
            )
            for r in row.restrictions
        ]
        rows.append(list(range(1, len(row.restrictions) + 1)))
        layers.append(
            Layer(
                layer_id=row.layer_id or new_id(),
                name=row.name or f"Layer {n}",
                members=tuple(row.members),
                rotation=cast(Rotation, row.rotation),
                handoff_time=row.handoff,
                start=moments["start"] or _NO_START,  # unread: a problem is raised below
                rotation_hours=hours,
                end=moments["end"],
                restrictions=tuple(restrictions),
            )
        )
    if not form.layers:
        problems.append(problem("layers", "Layers", "a schedule needs at least one layer"))
    if problems:
        raise ValidationFailed.for_fields(problems, "Some layers cannot be read.")
    return Built(layers, rows)


def problem(name: str, label: str, message: str) -> dict[str, str]:
    return {"field": name, "label": label, "message": message}


def _first_message(error: ValidationFailed) -> str:
    details = error.details if isinstance(error.details, dict) else {}
    fields = details.get("fields") or [{"message": error.message}]
    return str(fields[0]["message"])


def on_the_form(error: ValidationFailed, built: Built | None) -> ValidationFailed:
    """The domain's problems (paths such as `layers.0.restrictions.1.end`) named by the form's
    inputs and labelled as the form labels them, each input once."""
    details = error.details if isinstance(error.details, dict) else {}
    named: list[dict[str, str]] = []
    seen: set[str] = set()
    for found in details.get("fields", []):
        path, message = str(found.get("field")), str(found.get("message"))
        name, label = _input_of(path, built)
        if name in seen:
            continue
        seen.add(name)
        named.append(problem(name, label, message))
    # The domain's headline repeats its first problem by path ("name: must not be empty"): each
    # problem is shown at its input already, so the headline only says where to look.
    headline = "Some fields need a change; each is marked below." if named else error.message
    return ValidationFailed(headline, details={**details, "fields": named})


def _input_of(path: str, built: Built | None) -> tuple[str, str]:
    if path in LABELS:
        return ("lead" if path == "handoff_notice_lead_minutes" else path), LABELS[path]
    match = _LAYER_PATH.match(path)
    if match is None:
        return path, path.replace("_", " ").capitalize()
    n = int(match.group(1)) + 1
    part, index = match.group(2) or "", match.group(3)
    if part == "restrictions" and index is not None:
        rows = built.restriction_rows[n - 1] if built and n - 1 < len(built.restriction_rows) else []
        row = rows[int(index)] if int(index) < len(rows) else int(index) + 1
        return f"layer{n}_r{row}", f"Layer {n}: Restriction {row}"
    if part == "restrictions":
        return f"layer{n}_r", f"Layer {n}: Restrictions"
    name, label = LAYER_INPUTS.get(part, ("name", "Layer"))
    return f"layer{n}_{name}", f"Layer {n}: {label}"


def preview_schedule(schedule_id: str, form: ScheduleForm, built: Built, kept: Schedule | None) -> Schedule:
    """The schedule the form would save, with the stored schedule's overrides (they stay): its
    name and zone as typed, so the preview refuses what the save would."""
    return Schedule(
        schedule_id=schedule_id,
        name=form.name,
        time_zone=form.time_zone,
        layers=tuple(built.layers),
        overrides=kept.overrides if kept is not None else (),
        team_id=form.team_id or None,
    )


def lead_minutes(form: ScheduleForm) -> int:
    """The lead as typed; ValidationFailed naming the input when it is no whole number."""
    text = form.lead or "0"
    if not text.isdigit():
        raise ValidationFailed.for_fields(
            [problem("lead", LABELS["handoff_notice_lead_minutes"], "a whole number of minutes, 0 to 1440")]
        )
    return int(text)


def member_options(people: Sequence[tuple[str, str]], current: Sequence[str]) -> list[tuple[str, str]]:
    """The people a member select offers: those who can respond, and anyone already in the layer."""
    known = {user_id for user_id, _ in people}
    return [*people, *((user_id, f"{user_id} (cannot respond)") for user_id in current if user_id not in known)]
