"""On-call schedules as data: Schedule, Layer, Restriction, Override. Pure, no AWS.

A schedule has an IANA time zone, ordered layers and overrides.

- Layers are listed lowest first: a LATER layer wins over an earlier one wherever it has a
  shift; where it has none (outside its restrictions, before its start, after its end) the
  instant falls through to the layers below.
- Overrides win over every layer for exactly their interval. Where two overrides overlap, the
  later one in the list wins.
- A layer hands the rotation from member to member at `handoff_time`, a local wall-clock time
  in the schedule's zone (see `chalicelib.oncall.rotation` for the cadences and DST rules).
- Restrictions limit a layer to local wall-clock windows: daily ("09:00" to "17:00" every day;
  end before start wraps past midnight) or weekly (Monday=0 "09:00" to Friday=4 "17:00"; end
  before start wraps past Sunday night). Several restrictions are a union. A window ends at its
  end time (half-open); start == end is refused (leave restrictions out for all day).

`to_dict`/`from_dict` give the stored JSON form (times as RFC 3339 strings in UTC);
`from_dict` checks shape and raises ValidationFailed (details.fields); meaning is checked by
`chalicelib.oncall.validation.validate_schedule`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, cast

from chalicelib.oncall.fields import FieldReader, format_moment

Rotation = Literal["hourly", "daily", "weekly", "custom"]
ROTATIONS: tuple[Rotation, ...] = ("hourly", "daily", "weekly", "custom")
RestrictionKind = Literal["daily", "weekly"]
RESTRICTION_KINDS: tuple[RestrictionKind, ...] = ("daily", "weekly")

NAME_MAX = 100
ID_MAX = 64
MAX_LAYERS = 10
MAX_MEMBERS = 50
MAX_RESTRICTIONS = 14
MAX_OVERRIDES = 500
CUSTOM_HOURS_MIN = 1
CUSTOM_HOURS_MAX = 8760
DAYS_IN_WEEK = 7


@dataclass(frozen=True)
class Restriction:
    """A local wall-clock window the layer is limited to. Days: Monday=0 .. Sunday=6 (weekly only)."""

    kind: RestrictionKind
    start: str
    end: str
    start_day: int | None = None
    end_day: int | None = None

    @classmethod
    def daily(cls, start: str, end: str) -> Restriction:
        return cls("daily", start, end)

    @classmethod
    def weekly(cls, start_day: int, start: str, end_day: int, end: str) -> Restriction:
        return cls("weekly", start, end, start_day, end_day)

    def to_dict(self) -> dict[str, Any]:
        if self.kind == "weekly":
            return {
                "kind": "weekly",
                "start_day": self.start_day,
                "start": self.start,
                "end_day": self.end_day,
                "end": self.end,
            }
        return {"kind": self.kind, "start": self.start, "end": self.end}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Restriction:
        reader = FieldReader()
        restriction = _read_restriction(reader, data, "")
        reader.raise_if_any("The restriction is invalid.")
        return restriction


@dataclass(frozen=True)
class Layer:
    layer_id: str
    name: str
    members: tuple[str, ...]
    rotation: Rotation
    handoff_time: str
    start: datetime
    rotation_hours: int | None = None
    end: datetime | None = None
    restrictions: tuple[Restriction, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "members", tuple(self.members))
        object.__setattr__(self, "restrictions", tuple(self.restrictions))

    def to_dict(self) -> dict[str, Any]:
        return {
            "layer_id": self.layer_id,
            "name": self.name,
            "members": list(self.members),
            "rotation": self.rotation,
            "rotation_hours": self.rotation_hours,
            "handoff_time": self.handoff_time,
            "start": format_moment(self.start),
            "end": format_moment(self.end) if self.end is not None else None,
            "restrictions": [restriction.to_dict() for restriction in self.restrictions],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Layer:
        reader = FieldReader()
        layer = _read_layer(reader, data, "")
        reader.raise_if_any("The layer is invalid.")
        return layer


@dataclass(frozen=True)
class Override:
    """`user_id` is on call for [start, end), whatever the layers say."""

    override_id: str
    user_id: str
    start: datetime
    end: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "override_id": self.override_id,
            "user_id": self.user_id,
            "start": format_moment(self.start),
            "end": format_moment(self.end),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Override:
        reader = FieldReader()
        override = _read_override(reader, data, "")
        reader.raise_if_any("The override is invalid.")
        return override


@dataclass(frozen=True)
class Schedule:
    """Layers lowest first (later layers win); overrides win over all layers (later overrides win)."""

    schedule_id: str
    name: str
    time_zone: str
    layers: tuple[Layer, ...]
    overrides: tuple[Override, ...] = ()
    team_id: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "layers", tuple(self.layers))
        object.__setattr__(self, "overrides", tuple(self.overrides))

    def to_dict(self) -> dict[str, Any]:
        return {
            "schedule_id": self.schedule_id,
            "name": self.name,
            "team_id": self.team_id,
            "time_zone": self.time_zone,
            "layers": [layer.to_dict() for layer in self.layers],
            "overrides": [override.to_dict() for override in self.overrides],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Schedule:
        reader = FieldReader()
        data = reader.mapping(data, "schedule")
        layers = [
            _read_layer(reader, item, f"layers.{index}")
            for index, item in enumerate(reader.items(data, "layers", "layers"))
        ]
        overrides = [
            _read_override(reader, item, f"overrides.{index}")
            for index, item in enumerate(reader.items(data, "overrides", "overrides", optional=True))
        ]
        schedule = cls(
            schedule_id=reader.text(data, "schedule_id", "schedule_id"),
            name=reader.text(data, "name", "name"),
            time_zone=reader.text(data, "time_zone", "time_zone"),
            layers=tuple(layers),
            overrides=tuple(overrides),
            team_id=reader.optional_text(data, "team_id", "team_id"),
        )
        reader.raise_if_any("The schedule is invalid.")
        return schedule


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _read_restriction(reader: FieldReader, data: Any, where: str) -> Restriction:
    data = reader.mapping(data, where or "restriction")
    kind = reader.text(data, "kind", _join(where, "kind"))
    if kind not in RESTRICTION_KINDS:
        reader.fail(_join(where, "kind"), "must be daily or weekly")
    weekly = kind == "weekly"
    return Restriction(
        kind=cast(RestrictionKind, kind),
        start=reader.text(data, "start", _join(where, "start")),
        end=reader.text(data, "end", _join(where, "end")),
        start_day=reader.optional_int(data, "start_day", _join(where, "start_day"), required=weekly),
        end_day=reader.optional_int(data, "end_day", _join(where, "end_day"), required=weekly),
    )


def _read_layer(reader: FieldReader, data: Any, where: str) -> Layer:
    data = reader.mapping(data, where or "layer")
    members = reader.items(data, "members", _join(where, "members"))
    for index, member in enumerate(members):
        if not isinstance(member, str):
            reader.fail(_join(where, f"members.{index}"), "must be a user id string")
    restrictions = [
        _read_restriction(reader, item, _join(where, f"restrictions.{index}"))
        for index, item in enumerate(reader.items(data, "restrictions", _join(where, "restrictions"), optional=True))
    ]
    rotation = reader.text(data, "rotation", _join(where, "rotation"))
    return Layer(
        layer_id=reader.text(data, "layer_id", _join(where, "layer_id")),
        name=reader.text(data, "name", _join(where, "name")),
        members=tuple(str(member) for member in members),
        rotation=cast(Rotation, rotation),
        rotation_hours=reader.optional_int(data, "rotation_hours", _join(where, "rotation_hours")),
        handoff_time=reader.text(data, "handoff_time", _join(where, "handoff_time")),
        start=reader.moment(data, "start", _join(where, "start")),
        end=reader.optional_moment(data, "end", _join(where, "end")),
        restrictions=tuple(restrictions),
    )


def _read_override(reader: FieldReader, data: Any, where: str) -> Override:
    data = reader.mapping(data, where or "override")
    return Override(
        override_id=reader.text(data, "override_id", _join(where, "override_id")),
        user_id=reader.text(data, "user_id", _join(where, "user_id")),
        start=reader.moment(data, "start", _join(where, "start")),
        end=reader.moment(data, "end", _join(where, "end")),
    )
