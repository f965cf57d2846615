"""Schedules: create, read, list, update, delete, overrides, shifts.

The calendar feed of a schedule is in `chalicelib.oncall.feed`.

Writes validate with the pure rules (`validate_schedule`, `validate_override`) and check the
organization: layer members and override users must be its active users, a team its team.
Every write checks and bumps the record's version: a PATCH naming the version it read gets a 409
when someone wrote in between; other writes (overrides) re-read and re-apply. Overrides that
ended more than OVERRIDE_RETENTION ago are pruned on every write. Every write also replans the
schedule's next handoff notice (chalicelib.oncall.notice_index) and marks its coverage to be
checked (chalicelib.oncall.coverage_watch).

Who is on call now (which needs services and escalation policies too) is in
`chalicelib.paging.on_call`.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from types import EllipsisType

from pynamodb.exceptions import DoesNotExist

from chalicelib.directory import rules
from chalicelib.directory.teams import get_team
from chalicelib.directory.users import User, get_users
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.oncall import coverage_watch
from chalicelib.oncall.notice_index import check_lead_minutes, lead_of, plan_on_write
from chalicelib.oncall.rotation import FinalShift, final_shifts
from chalicelib.oncall.schedule import Layer, Override, Schedule
from chalicelib.oncall.tables import ScheduleRecord
from chalicelib.oncall.validation import validate_override, validate_schedule
from chalicelib.store import RetryableConflict, delete_if, retry_on_conflict, save_if, scope

OVERRIDE_RETENTION = timedelta(days=30)
MAX_SHIFTS_WINDOW = timedelta(days=93)
DEFAULT_SHIFTS_WINDOW = timedelta(days=7)


@dataclass(frozen=True)
class StoredSchedule:
    """A schedule as stored: the pure `Schedule` and its record's metadata."""

    schedule: Schedule
    organization_id: str
    ical_token: str
    version: int
    created_at: datetime
    updated_at: datetime | None
    handoff_notice_lead_minutes: int = 0  # people are told of their handoffs this long ahead

    @property
    def schedule_id(self) -> str:
        return self.schedule.schedule_id


@dataclass(frozen=True)
class ScheduleShifts:
    schedule: StoredSchedule
    since: datetime
    until: datetime
    shifts: list[FinalShift]
    users: dict[str, User]  # the people named by the shifts (unknown ids are absent)


def new_schedule_id() -> str:
    return f"sch_{uuid.uuid4().hex}"


def new_layer_id() -> str:
    return f"lyr_{uuid.uuid4().hex[:16]}"


def new_override_id() -> str:
    return f"ovr_{uuid.uuid4().hex[:16]}"


def to_domain(record: ScheduleRecord) -> StoredSchedule:
    schedule = Schedule.from_dict(
        {
            "schedule_id": record.schedule_id,
            "name": record.name,
            "team_id": record.team_id,
            "time_zone": record.time_zone,
            "layers": record.layers or [],
            "overrides": record.overrides or [],
        }
    )
    return StoredSchedule(
        schedule,
        record.organization_id,
        record.ical_token,
        int(record.version or 0),
        record.created_at,
        record.updated_at,
        lead_of(record),
    )


def _not_found() -> NotFound:
    return NotFound("Schedule not found.")


def _stale(expected: int, current_version: int) -> Conflict:
    return Conflict(
        f"The schedule changed since version {expected}; it is now at version {current_version}. "
        "Read it again and reapply your change.",
        details={"expected_version": expected, "current_version": current_version},
    )


def _check_team(organization_id: str, team_id: str | None) -> None:
    if team_id is None:
        return
    try:
        get_team(organization_id=organization_id, team_id=team_id)
    except NotFound:
        raise ValidationFailed.for_field("team_id", "no such team in this organization") from None


def _check_people(organization_id: str, people: dict[str, str]) -> None:
    """`people` maps a field path to a user id; every one must be an active user (one BatchGet)."""
    found = get_users(organization_id=organization_id, user_ids=list(people.values()))
    problems = []
    for where, user_id in people.items():
        user = found.get(user_id)
        if user is None:
            problems.append({"field": where, "message": "no such user in this organization"})
        elif not user.is_active:
            problems.append({"field": where, "message": "the user is deactivated"})
    if problems:
        raise ValidationFailed.for_fields(problems, "The schedule names unknown people.")


def _members(layers: Sequence[Layer]) -> dict[str, str]:
    return {
        f"layers.{index}.members.{number}": member
        for index, layer in enumerate(layers)
        for number, member in enumerate(layer.members)
    }


def _prune(overrides: Sequence[Override], now: datetime) -> tuple[Override, ...]:
    return tuple(override for override in overrides if override.end > now - OVERRIDE_RETENTION)


def apply_to_record(record: ScheduleRecord, schedule: Schedule, lead_minutes: int, now: datetime) -> None:
    """Copy the schedule onto the record read (its notice plan included), ready to be saved."""
    plan_on_write(record, schedule, lead_minutes, now)
    record.handoff_notice_lead_minutes = lead_minutes
    record.name = schedule.name
    record.team_id = schedule.team_id
    record.time_zone = schedule.time_zone
    record.layers = [layer.to_dict() for layer in schedule.layers]
    record.overrides = [override.to_dict() for override in schedule.overrides]
    record.updated_at = now


def _write(record: ScheduleRecord, schedule: Schedule, lead_minutes: int, now: datetime) -> bool:
    """Copy the schedule onto the record and save it, conditional on the version read; False
    when another writer changed (or deleted) it first."""
    apply_to_record(record, schedule, lead_minutes, now)
    return save_if(record, ScheduleRecord.schedule_id.exists())


def prune_overrides(schedule: Schedule, now: datetime) -> Schedule:
    """The schedule without the overrides that ended more than OVERRIDE_RETENTION ago."""
    return replace(schedule, overrides=_prune(schedule.overrides, now))


def create_schedule(
    *,
    organization_id: str,
    name: str,
    time_zone: str,
    layers: Sequence[Layer],
    now: datetime,
    team_id: str | None = None,
    handoff_notice_lead_minutes: int = 0,
) -> StoredSchedule:
    schedule = Schedule(new_schedule_id(), rules.clean_name(name), time_zone, tuple(layers), (), team_id)
    validate_schedule(schedule)
    check_lead_minutes(handoff_notice_lead_minutes)
    _check_team(organization_id, team_id)
    _check_people(organization_id, _members(schedule.layers))
    record = ScheduleRecord(
        organization_id,
        schedule.schedule_id,
        name=schedule.name,
        team_id=team_id,
        time_zone=time_zone,
        layers=[layer.to_dict() for layer in schedule.layers],
        overrides=[],
        ical_token=secrets.token_urlsafe(32),
        created_at=now,
        handoff_notice_lead_minutes=handoff_notice_lead_minutes,
    )
    plan_on_write(record, schedule, handoff_notice_lead_minutes, now)
    record.save(condition=ScheduleRecord.schedule_id.does_not_exist())
    coverage_watch.mark_due(organization_id, "schedule", schedule.schedule_id, now)
    return to_domain(record)


def get_record(organization_id: str, schedule_id: str, *, consistent: bool = False) -> ScheduleRecord:
    if not rules.is_item_id(schedule_id):
        raise _not_found()
    try:
        return ScheduleRecord.get(organization_id, schedule_id, consistent_read=consistent)
    except DoesNotExist:
        raise _not_found() from None


def get_schedule(*, organization_id: str, schedule_id: str) -> StoredSchedule:
    return to_domain(get_record(organization_id, schedule_id))


def get_schedules(*, organization_id: str, schedule_ids: Sequence[str]) -> dict[str, StoredSchedule]:
    """Several schedules in one BatchGetItem (per 100), keyed by id; unknown ids are absent."""
    wanted = [s for s in rules.unique_in_order(list(schedule_ids)) if rules.is_item_id(s)]
    if not wanted:
        return {}
    return scope.remembered_many("schedule", organization_id, wanted, lambda ids: _read_schedules(organization_id, ids))


def _read_schedules(organization_id: str, schedule_ids: list[str]) -> dict[str, StoredSchedule]:
    found = ScheduleRecord.batch_get([(organization_id, s) for s in schedule_ids])
    return {record.schedule_id: to_domain(record) for record in found}


def list_schedules(*, organization_id: str, team_id: str | None = None) -> list[StoredSchedule]:
    """Newest first; one Query on the organization's partition."""
    found = [
        to_domain(record)
        for record in ScheduleRecord.query(organization_id)
        if team_id is None or record.team_id == team_id
    ]
    return sorted(found, key=lambda s: (s.created_at, s.schedule_id), reverse=True)


def _modify(
    organization_id: str,
    schedule_id: str,
    now: datetime,
    change: Callable[[Schedule], Schedule],
    expected_version: int | None = None,
    lead_minutes: int | EllipsisType = ...,
) -> StoredSchedule:
    """Read, change, validate, prune, write; retried on a concurrent write unless a version was named."""

    def attempt() -> StoredSchedule:
        record = get_record(organization_id, schedule_id, consistent=True)
        if expected_version is not None and record.version != expected_version:
            raise _stale(expected_version, int(record.version or 0))
        changed = prune_overrides(change(to_domain(record).schedule), now)
        validate_schedule(changed)
        if not _write(record, changed, lead_of(record) if lead_minutes is ... else lead_minutes, now):
            if expected_version is not None:
                latest = get_record(organization_id, schedule_id, consistent=True)
                raise _stale(expected_version, int(latest.version or 0))
            raise RetryableConflict()
        return to_domain(record)

    stored = retry_on_conflict(attempt, what="schedule")
    coverage_watch.mark_due(organization_id, "schedule", schedule_id, now)
    return stored


def update_schedule(
    *,
    organization_id: str,
    schedule_id: str,
    now: datetime,
    expected_version: int | None = None,
    name: str | EllipsisType = ...,
    time_zone: str | EllipsisType = ...,
    team_id: str | EllipsisType | None = ...,
    layers: Sequence[Layer] | EllipsisType = ...,
    handoff_notice_lead_minutes: int | EllipsisType = ...,
) -> StoredSchedule:
    """Change only the arguments given (`...` means unchanged); `layers` replaces every layer."""
    if handoff_notice_lead_minutes is not ...:
        check_lead_minutes(handoff_notice_lead_minutes)
    new_name = rules.clean_name(name) if name is not ... else ...
    if team_id is not ...:
        _check_team(organization_id, team_id)
    if layers is not ...:
        _check_people(organization_id, _members(layers))

    def change(schedule: Schedule) -> Schedule:
        return replace(
            schedule,
            name=schedule.name if new_name is ... else new_name,
            time_zone=schedule.time_zone if time_zone is ... else time_zone,
            team_id=schedule.team_id if team_id is ... else team_id,
            layers=schedule.layers if layers is ... else tuple(layers),
        )

    return _modify(organization_id, schedule_id, now, change, expected_version, handoff_notice_lead_minutes)


def delete_schedule(
    *, organization_id: str, schedule_id: str, used_by_policies: Sequence[str], policy_names: Sequence[str] = ()
) -> None:
    """404 when unknown; 409 while an escalation policy targets it (details.policy_ids; the
    message names them when the caller passes their names).

    The caller passes `escalation.service.policies_using_schedule(...)`: policies sit above
    schedules in the import layers, so schedules cannot ask for them (docs/ARCHITECTURE.md)."""
    record = get_record(organization_id, schedule_id)
    users = list(used_by_policies)
    if users:
        named = f" ({', '.join(policy_names)})" if policy_names else ""
        raise Conflict(
            f"The schedule is a target of escalation policies{named}; remove it from them first.",
            details={"policy_ids": users},
        )
    if not delete_if(record, ScheduleRecord.schedule_id.exists(), add_version_condition=False):
        raise _not_found()
    coverage_watch.forget(organization_id, "schedule", schedule_id)


def add_override(
    *, organization_id: str, schedule_id: str, user_id: str, start: datetime, end: datetime, now: datetime
) -> tuple[StoredSchedule, Override]:
    """`user_id` is on call for [start, end) whatever the layers say; later overrides win."""
    override = Override(new_override_id(), user_id, start, end)
    validate_override(override)
    if end <= now - OVERRIDE_RETENTION:
        raise ValidationFailed.for_field("end", f"must be less than {OVERRIDE_RETENTION.days} days in the past")
    get_record(organization_id, schedule_id)  # 404 before 400 for an unknown schedule
    _check_people(organization_id, {"user_id": user_id})
    stored = _modify(
        organization_id,
        schedule_id,
        now,
        lambda schedule: replace(schedule, overrides=(*schedule.overrides, override)),
    )
    return stored, override


def remove_override(*, organization_id: str, schedule_id: str, override_id: str, now: datetime) -> StoredSchedule:
    def change(schedule: Schedule) -> Schedule:
        kept = tuple(o for o in schedule.overrides if o.override_id != override_id)
        if len(kept) == len(schedule.overrides):
            raise NotFound("Override not found.")
        return replace(schedule, overrides=kept)

    return _modify(organization_id, schedule_id, now, change)


def schedule_shifts(*, organization_id: str, schedule_id: str, since: datetime, until: datetime) -> ScheduleShifts:
    """Final shifts over [since, until) (at most MAX_SHIFTS_WINDOW) with the people they name."""
    if until <= since:
        raise ValidationFailed.for_field("until", "must be after since")
    if until - since > MAX_SHIFTS_WINDOW:
        raise ValidationFailed.for_field("until", f"the window is at most {MAX_SHIFTS_WINDOW.days} days")
    stored = get_schedule(organization_id=organization_id, schedule_id=schedule_id)
    shifts = final_shifts(stored.schedule, since, until)
    users = get_users(organization_id=organization_id, user_ids=[shift.user_id for shift in shifts])
    return ScheduleShifts(stored, since, until, shifts, users)
