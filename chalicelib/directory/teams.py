"""Teams: named groups of users. Names are unique per organization, case-insensitively.

Every write to a team checks and bumps its version attribute, so two concurrent
membership changes both land (the loser re-reads and retries) instead of one
overwriting the other's member list.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from types import EllipsisType

from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.update import Action

from chalicelib import clock
from chalicelib.directory import rules
from chalicelib.directory.tables import TeamRecord
from chalicelib.directory.users import get_user, get_users
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.store import (
    RetryableConflict,
    Transaction,
    TransactionCancelled,
    assign,
    claim_unique,
    owner_of,
    release_unique,
    retry_on_conflict,
    update_if,
)

MEMBERS_MAX = 500


@dataclass(frozen=True)
class Team:
    team_id: str
    organization_id: str
    name: str
    description: str | None
    member_ids: list[str]
    is_active: bool
    created_at: datetime

    @property
    def member_count(self) -> int:
        return len(self.member_ids)


def _to_domain(record: TeamRecord) -> Team:
    return Team(
        team_id=record.team_id,
        organization_id=record.organization_id,
        name=record.name,
        description=record.description,
        member_ids=[str(member) for member in record.member_ids or []],
        is_active=bool(record.is_active),
        created_at=record.created_at,
    )


def _name_guard(name: str) -> str:
    return rules.guard_key(rules.TEAM_NAME_GUARD, rules.name_key(name))


def _duplicate_name(name: str) -> Conflict:
    return Conflict(
        f"A team named '{name}' already exists in this organization.",
        details={"fields": [{"field": "name", "message": "already in use"}]},
    )


def _check_members(organization_id: str, member_ids: Sequence[str]) -> list[str]:
    members = rules.unique_in_order(list(member_ids))
    if len(members) > MEMBERS_MAX:
        raise ValidationFailed.for_field("member_ids", f"a team has at most {MEMBERS_MAX} members")
    found = get_users(organization_id=organization_id, user_ids=members)
    unknown = [m for m in members if m not in found]
    if unknown:
        raise ValidationFailed.for_field("member_ids", f"unknown users: {', '.join(unknown)}")
    return members


def create_team(
    *,
    organization_id: str,
    name: str,
    now: datetime,
    description: str | None = None,
    member_ids: Sequence[str] = (),
) -> Team:
    clean_name = rules.clean_name(name)
    clean_description = rules.clean_description(description)
    members = _check_members(organization_id, member_ids)
    record = TeamRecord(
        organization_id,
        str(uuid.uuid4()),
        name=clean_name,
        description=clean_description,
        member_ids=members,
        is_active=True,
        created_at=now,
    )

    def attempt() -> Team:
        tx = Transaction()
        tx.put("team", record, condition=TeamRecord.team_id.does_not_exist())
        claim_unique(tx, "guard", organization_id, _name_guard(clean_name), record.team_id)
        try:
            tx.commit()
        except TransactionCancelled as cancelled:
            if "guard" in cancelled.failed:
                raise _duplicate_name(clean_name) from None
            if cancelled.contention:
                raise RetryableConflict() from None
            raise
        return _to_domain(record)

    return retry_on_conflict(attempt, what="team")


def _get_record(organization_id: str, team_id: str, *, consistent: bool = False) -> TeamRecord:
    if not rules.is_item_id(team_id):
        raise NotFound("Team not found.")
    try:
        return TeamRecord.get(organization_id, team_id, consistent_read=consistent)
    except DoesNotExist:
        raise NotFound("Team not found.") from None


def get_team(*, organization_id: str, team_id: str) -> Team:
    return _to_domain(_get_record(organization_id, team_id))


def get_teams(*, organization_id: str, team_ids: list[str]) -> dict[str, Team]:
    """Several teams in one BatchGetItem (per 100), keyed by id; unknown ids are absent."""
    wanted = [t for t in rules.unique_in_order(team_ids) if rules.is_item_id(t)]
    if not wanted:
        return {}
    return {r.team_id: _to_domain(r) for r in TeamRecord.batch_get([(organization_id, t) for t in wanted])}


def find_team_by_name(*, organization_id: str, name: str) -> Team | None:
    """Case-insensitive: the name guard points at the team (two GetItems, no scan)."""
    if not name.strip() or len(name) > rules.NAME_MAX * 4:
        return None
    team_id = owner_of(organization_id=organization_id, unique_key=_name_guard(name))
    if team_id is None:
        return None
    try:
        return get_team(organization_id=organization_id, team_id=team_id)
    except NotFound:
        return None


def list_teams(*, organization_id: str, search: str | None = None, is_active: bool | None = None) -> list[Team]:
    """Newest first; `search` is a case-insensitive substring of the name."""
    found = [
        _to_domain(record)
        for record in TeamRecord.query(organization_id)
        if rules.matches_search(search, record.name) and (is_active is None or bool(record.is_active) == is_active)
    ]
    return sorted(found, key=lambda t: (t.created_at, t.team_id), reverse=True)


def _write(record: TeamRecord, actions: list[Action]) -> Team:
    """One versioned UpdateItem; a version mismatch means someone else wrote first."""
    if not update_if(record, actions):
        raise RetryableConflict()
    return _to_domain(record)


def update_team(
    *,
    organization_id: str,
    team_id: str,
    now: datetime,
    name: str | EllipsisType = ...,
    description: str | EllipsisType | None = ...,
    is_active: bool | EllipsisType = ...,
    member_ids: Sequence[str] | EllipsisType = ...,
) -> Team:
    """Change only the arguments given (`...` means unchanged); a rename moves the name guard atomically."""
    actions: list[Action] = [assign(TeamRecord.updated_at, now)]
    if description is not ...:
        actions.append(assign(TeamRecord.description, rules.clean_description(description)))
    if is_active is not ...:
        actions.append(assign(TeamRecord.is_active, bool(is_active)))
    if member_ids is not ...:
        actions.append(assign(TeamRecord.member_ids, _check_members(organization_id, member_ids)))
    new_name = rules.clean_name(name) if name is not ... else None

    def attempt() -> Team:
        record = _get_record(organization_id, team_id, consistent=True)
        all_actions = list(actions)
        if new_name is None or new_name == record.name:
            return _write(record, all_actions)
        all_actions.append(assign(TeamRecord.name, new_name))
        if rules.name_key(new_name) == rules.name_key(record.name):
            return _write(record, all_actions)  # only the case changed: the guard stays
        tx = Transaction()
        claim_unique(tx, "new-guard", organization_id, _name_guard(new_name), team_id)
        release_unique(tx, "old-guard", organization_id, _name_guard(record.name), team_id)
        tx.update("team", record, all_actions)
        try:
            tx.commit()
        except TransactionCancelled as cancelled:
            if "new-guard" in cancelled.failed:
                raise _duplicate_name(new_name) from None
            if cancelled.retryable:
                raise RetryableConflict() from None
            raise
        return get_team(organization_id=organization_id, team_id=team_id)

    return retry_on_conflict(attempt, what="team")


def add_member(*, organization_id: str, team_id: str, user_id: str, now: datetime | None = None) -> Team:
    """Idempotent: adding a current member changes nothing. The user must exist in the organization."""
    get_user(organization_id=organization_id, user_id=user_id)
    stamp = now or clock.now()

    def attempt() -> Team:
        record = _get_record(organization_id, team_id, consistent=True)
        members = [str(m) for m in record.member_ids or []]
        if user_id in members:
            return _to_domain(record)
        if len(members) >= MEMBERS_MAX:
            raise ValidationFailed.for_field("user_id", f"a team has at most {MEMBERS_MAX} members")
        added = [*members, user_id]
        return _write(record, [assign(TeamRecord.member_ids, added), assign(TeamRecord.updated_at, stamp)])

    return retry_on_conflict(attempt, what="team")


def remove_member(*, organization_id: str, team_id: str, user_id: str, now: datetime | None = None) -> Team:
    """Idempotent: removing someone who is not a member changes nothing."""
    stamp = now or clock.now()

    def attempt() -> Team:
        record = _get_record(organization_id, team_id, consistent=True)
        members = [str(m) for m in record.member_ids or []]
        if user_id not in members:
            return _to_domain(record)
        remaining = [m for m in members if m != user_id]
        return _write(record, [assign(TeamRecord.member_ids, remaining), assign(TeamRecord.updated_at, stamp)])

    return retry_on_conflict(attempt, what="team")
