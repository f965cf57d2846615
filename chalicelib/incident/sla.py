"""Per-severity SLA targets and their arithmetic. Pure: every function takes the times it needs.

An SLA is met when the work is done at or before the due time (exactly on time counts as met).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from chalicelib import clock
from chalicelib.errors import ConfigurationError, ValidationFailed
from chalicelib.severity import SEVERITIES

MAX_SLA_MINUTES = 366 * 24 * 60
SLA_FIELDS = ("acknowledge_within_minutes", "resolve_within_minutes")


@dataclass(frozen=True)
class SlaTarget:
    acknowledge_within_minutes: int | None = None
    resolve_within_minutes: int | None = None

    @property
    def is_complete(self) -> bool:
        return self.acknowledge_within_minutes is not None and self.resolve_within_minutes is not None

    def to_dict(self) -> dict[str, int | None]:
        return {
            "acknowledge_within_minutes": self.acknowledge_within_minutes,
            "resolve_within_minutes": self.resolve_within_minutes,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SlaTarget:
        return cls(
            acknowledge_within_minutes=_optional_int(data.get("acknowledge_within_minutes")),
            resolve_within_minutes=_optional_int(data.get("resolve_within_minutes")),
        )


class _FrozenTargets(Mapping[str, SlaTarget]):
    def __init__(self, targets: Mapping[str, SlaTarget]) -> None:
        self._data = dict(targets)

    def __getitem__(self, key: str) -> SlaTarget:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __repr__(self) -> str:
        return repr(self._data)


@dataclass(frozen=True)
class SlaSettings:
    per_severity: Mapping[str, SlaTarget]

    def __post_init__(self) -> None:
        if not isinstance(self.per_severity, _FrozenTargets):
            object.__setattr__(self, "per_severity", _FrozenTargets(self.per_severity))

    def target_for(self, severity: str) -> SlaTarget | None:
        return self.per_severity.get(severity)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: {"per_severity": {"SEV0": {acknowledge_within_minutes, resolve_within_minutes}, ...}}."""
        ordered = sorted(self.per_severity, key=lambda s: (SEVERITIES.index(s) if s in SEVERITIES else 99, s))
        return {"per_severity": {severity: self.per_severity[severity].to_dict() for severity in ordered}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SlaSettings:
        raw = data.get("per_severity")
        if not isinstance(raw, Mapping):
            raise ValidationFailed.for_field("per_severity", "must be an object keyed by severity")
        problems = [
            {"field": f"per_severity.{key}", "message": "must be an object"}
            for key, value in raw.items()
            if not isinstance(value, Mapping)
        ]
        if problems:
            raise ValidationFailed.for_fields(problems, "The SLA settings are invalid.")
        return cls({str(key): SlaTarget.from_dict(value) for key, value in raw.items()})


DEFAULT_SLA_SETTINGS = SlaSettings(
    {
        "SEV0": SlaTarget(5, 60),
        "SEV1": SlaTarget(15, 240),
        "SEV2": SlaTarget(30, 480),
        "SEV3": SlaTarget(240, 2880),
        "SEV4": SlaTarget(1440, 10080),
    }
)


def require_complete(settings: SlaSettings, severity: str) -> SlaTarget:
    """The severity's target with both values set, or ConfigurationError (the spec's 500 INTERNAL_ERROR)."""
    target = settings.target_for(severity)
    if target is None or not target.is_complete:
        raise ConfigurationError(f"incomplete SLA settings for {severity}", details={"severity": severity})
    return target


def validate_sla_update(settings: SlaSettings) -> None:
    """ValidationFailed unless keys are severities, values are None or 1..MAX_SLA_MINUTES, ack <= resolve."""
    problems: list[dict[str, str]] = []
    for severity, target in settings.per_severity.items():
        where = f"per_severity.{severity}"
        if severity not in SEVERITIES:
            problems.append({"field": where, "message": f"unknown severity; use one of {', '.join(SEVERITIES)}"})
            continue
        for name in SLA_FIELDS:
            value = getattr(target, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SLA_MINUTES:
                problems.append(
                    {"field": f"{where}.{name}", "message": f"must be an integer from 1 to {MAX_SLA_MINUTES}"}
                )
        ack, resolve = target.acknowledge_within_minutes, target.resolve_within_minutes
        if isinstance(ack, int) and isinstance(resolve, int) and ack > resolve:
            problems.append(
                {"field": f"{where}.acknowledge_within_minutes", "message": "must not exceed resolve_within_minutes"}
            )
    if problems:
        raise ValidationFailed.for_fields(problems, "The SLA settings are invalid.")


def apply_sla_update(current: SlaSettings, changes: Mapping[str, Mapping[str, int | None]]) -> SlaSettings:
    """Merge per-severity changes: a field given replaces (None clears it), a field left out is kept.

    The merged settings are validated (ValidationFailed) before they are returned.
    """
    merged = dict(current.per_severity)
    for severity, fields in changes.items():
        unknown = sorted(set(fields) - set(SLA_FIELDS))
        if unknown:
            raise ValidationFailed.for_field(f"per_severity.{severity}.{unknown[0]}", "unknown field")
        base = merged.get(severity, SlaTarget()).to_dict()
        base.update(fields)
        merged[severity] = SlaTarget(**base)
    result = SlaSettings(merged)
    validate_sla_update(result)
    return result


@dataclass(frozen=True)
class SlaOutcome:
    due_at: datetime
    met: bool
    elapsed_seconds: int


def _aware(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def due_at(created_at: datetime, within_minutes: int, *, scale: float) -> datetime:
    return _aware(created_at) + clock.scaled(timedelta(minutes=within_minutes), scale=scale)


def evaluate(created_at: datetime, done_at: datetime, within_minutes: int, *, scale: float) -> SlaOutcome:
    """Met when done at or before created_at + within_minutes. Elapsed seconds are floored, never negative."""
    start, end = _aware(created_at), _aware(done_at)
    deadline = due_at(start, within_minutes, scale=scale)
    elapsed = max(0, math.floor((end - start).total_seconds()))
    return SlaOutcome(due_at=deadline, met=end <= deadline, elapsed_seconds=elapsed)


def acknowledge_due_at(created_at: datetime, target: SlaTarget, *, scale: float) -> datetime:
    if target.acknowledge_within_minutes is None:
        raise ConfigurationError("incomplete SLA settings: no acknowledge_within_minutes")
    return due_at(created_at, target.acknowledge_within_minutes, scale=scale)


def resolve_due_at(created_at: datetime, target: SlaTarget, *, scale: float) -> datetime:
    if target.resolve_within_minutes is None:
        raise ConfigurationError("incomplete SLA settings: no resolve_within_minutes")
    return due_at(created_at, target.resolve_within_minutes, scale=scale)


def is_breached(due: datetime, now: datetime) -> bool:
    """Breached once `now` is strictly after the due time (exactly on time is still met)."""
    return _aware(now) > _aware(due)


def seconds_until(due: datetime, now: datetime) -> int:
    """Whole seconds from `now` until `due` (rounded up, never negative): a delay for a breach check."""
    return max(0, math.ceil((_aware(due) - _aware(now)).total_seconds()))


def _optional_int(value: Any) -> int | None:
    """None or an integer; DynamoDB numbers come back as Decimal and JSON may carry 5.0."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
        return int(value)
    raise ValidationFailed.for_field("per_severity", f"SLA minutes must be integers, not {value!r}")


# --- the incident's stored SLA document (due times and outcomes) ----------------------------------

RESOLVE_OUTCOME = ("resolve_met", "resolved_after_seconds")


def with_resolution(sla: Mapping[str, Any] | None, *, created_at: datetime, resolved_at: datetime) -> dict[str, Any]:
    """The resolve outcome recorded: met when resolved by `resolve_due_at`. A document without a
    resolve due time, or with an outcome already, is returned unchanged."""
    document = dict(sla or {})
    if "resolve_due_at" in document and "resolve_met" not in document:
        document["resolve_met"] = _aware(resolved_at) <= clock.parse(document["resolve_due_at"])
        document["resolved_after_seconds"] = max(
            0, math.floor((_aware(resolved_at) - _aware(created_at)).total_seconds())
        )
    return document


def without_resolution(sla: Mapping[str, Any] | None) -> dict[str, Any]:
    """A reopened incident is unresolved again: its resolve SLA is running (no outcome) until the
    next resolution decides it, against the same due time."""
    return {key: value for key, value in (sla or {}).items() if key not in RESOLVE_OUTCOME}
