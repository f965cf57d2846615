"""Users: people who can be paged, assigned and put on call. Email is unique per organization.

A person may choose a time zone (an IANA name): notifications and the console show their times in
it. Without one (`time_zone` None) they follow their organization's (`zone_of`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from types import EllipsisType

from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.update import Action

from chalicelib.apikey.service import revoke_keys_of_user
from chalicelib.directory import rules
from chalicelib.directory.tables import UserRecord
from chalicelib.errors import Conflict, NotFound
from chalicelib.organization.service import check_time_zone, organization_time_zone
from chalicelib.queue.messages import Message, publish
from chalicelib.store import (
    RetryableConflict,
    Transaction,
    TransactionCancelled,
    assign,
    claim_unique,
    release_unique,
    retry_on_conflict,
    scope,
)


@dataclass(frozen=True)
class User:
    user_id: str
    organization_id: str
    name: str | None
    email: str | None
    slack_user_id: str | None
    role: str
    is_active: bool
    created_at: datetime
    time_zone: str | None = None  # the person's own choice; None: the organization's


USER_CREATED = "directory.user_created"


def _to_domain(record: UserRecord) -> User:
    return User(
        user_id=record.user_id,
        organization_id=record.organization_id,
        name=record.name,
        email=record.email,
        slack_user_id=record.slack_user_id,
        role=record.role or rules.DEFAULT_ROLE,
        is_active=bool(record.is_active),
        created_at=record.created_at,
        time_zone=record.time_zone or None,
    )


def zone_of(user: User, organization_zone: str | None = None) -> str:
    """The zone the person reads times in: their own, else the organization's (read when not given)."""
    if user.time_zone:
        return user.time_zone
    return organization_zone if organization_zone is not None else organization_time_zone(user.organization_id)


def _email_key(organization_id: str, email: str) -> str:
    return f"{organization_id}#{email}"


def _email_guard(email: str) -> str:
    return rules.guard_key(rules.USER_EMAIL_GUARD, email)


def _duplicate_email(email: str) -> Conflict:
    return Conflict(
        f"A user with email {email} already exists in this organization.",
        details={"fields": [{"field": "email", "message": "already in use"}]},
    )


def create_user(
    *,
    organization_id: str,
    name: str | None,
    email: str,
    now: datetime,
    slack_user_id: str | None = None,
    role: str = rules.DEFAULT_ROLE,
    time_zone: str | None = None,
) -> User:
    """Email is lower-cased; a second user with the same email in the organization is a 409.
    No `time_zone`: the person follows the organization's."""
    clean_name = rules.clean_name(name) if name is not None else None
    clean_email = rules.normalize_email(email)
    clean_slack = rules.clean_slack_user_id(slack_user_id)
    rules.check_role(role)
    zone = check_time_zone(time_zone) if time_zone is not None else None
    record = UserRecord(
        organization_id,
        str(uuid.uuid4()),
        name=clean_name,
        email=clean_email,
        email_key=_email_key(organization_id, clean_email),
        slack_user_id=clean_slack,
        role=role,
        is_active=True,
        time_zone=zone,
        created_at=now,
    )

    def attempt() -> User:
        tx = Transaction()
        tx.put("user", record, condition=UserRecord.user_id.does_not_exist())
        claim_unique(tx, "guard", organization_id, _email_guard(clean_email), record.user_id)
        try:
            tx.commit()
        except TransactionCancelled as cancelled:
            if "guard" in cancelled.failed:
                raise _duplicate_email(clean_email) from None
            if cancelled.contention:
                raise RetryableConflict() from None
            raise
        return _to_domain(record)

    user = retry_on_conflict(attempt, what="user")
    # After the commit: the console sign-in is made by its consumer (chalicelib.directory.invitations).
    publish(
        Message(
            USER_CREATED,
            organization_id,
            {"user_id": user.user_id, "email": user.email, "name": user.name or ""},
        )
    )
    return user


def _get_record(organization_id: str, user_id: str, *, consistent: bool = False) -> UserRecord:
    if not rules.is_item_id(user_id):
        raise NotFound("User not found.")
    try:
        return UserRecord.get(organization_id, user_id, consistent_read=consistent)
    except DoesNotExist:
        raise NotFound("User not found.") from None


def get_user(*, organization_id: str, user_id: str) -> User:
    if scope.active():
        found = get_users(organization_id=organization_id, user_ids=[user_id]).get(user_id)
        if found is None:
            raise NotFound("User not found.")
        return found
    return _to_domain(_get_record(organization_id, user_id))


def get_users(*, organization_id: str, user_ids: list[str]) -> dict[str, User]:
    """Several users in one BatchGetItem (per 100), keyed by id; unknown ids are absent."""
    wanted = [u for u in rules.unique_in_order(user_ids) if rules.is_item_id(u)]
    if not wanted:
        return {}
    return scope.remembered_many("user", organization_id, wanted, lambda ids: _read_users(organization_id, ids))


def _read_users(organization_id: str, user_ids: list[str]) -> dict[str, User]:
    found = {
        record.user_id: _to_domain(record)
        for record in UserRecord.batch_get([(organization_id, user_id) for user_id in user_ids])
    }
    for user in found.values():
        if user.email:  # a later lookup by email (assignment by email) needs no Query
            scope.remember(("user-email", organization_id, user.email), user)
    return found


def find_user_by_email(*, organization_id: str, email: str) -> User | None:
    normalized = email.strip().lower()
    if not rules.is_valid_email(normalized):
        return None
    return scope.remembered(
        ("user-email", organization_id, normalized), lambda: _query_email(organization_id, normalized)
    )


def _query_email(organization_id: str, normalized: str) -> User | None:
    for record in UserRecord.by_email.query(_email_key(organization_id, normalized), limit=1):
        return _to_domain(record)
    return None


# A Slack user linked in more organizations than this is refused rather than read further.
MAX_SLACK_LINKS = 25


def find_users_by_slack_user_id(slack_user_id: str) -> list[User]:
    """The users, in any organization, linked to this Slack user id (the sparse slack-user-index;
    eventually consistent: a link made a second ago may not be found yet)."""
    if not slack_user_id or len(slack_user_id) > rules.SLACK_ID_MAX:
        return []
    records = UserRecord.by_slack_user_id.query(slack_user_id, limit=MAX_SLACK_LINKS)
    return [_to_domain(record) for record in records]


def list_users(*, organization_id: str, search: str | None = None, is_active: bool | None = None) -> list[User]:
    """Newest first; `search` is a case-insensitive substring of name or email."""
    found = [
        _to_domain(record)
        for record in UserRecord.query(organization_id)
        if rules.matches_search(search, record.name, record.email)
        and (is_active is None or bool(record.is_active) == is_active)
    ]
    return sorted(found, key=lambda u: (u.created_at, u.user_id), reverse=True)


def update_user(
    *,
    organization_id: str,
    user_id: str,
    now: datetime,
    name: str | EllipsisType | None = ...,
    email: str | EllipsisType = ...,
    slack_user_id: str | EllipsisType | None = ...,
    is_active: bool | EllipsisType = ...,
    role: str | EllipsisType = ...,
    time_zone: str | EllipsisType | None = ...,
) -> User:
    """Change only the arguments given (`...` means unchanged). A new email moves its guard atomically.
    `time_zone` None: the person follows the organization's zone again."""
    actions: list[Action] = [assign(UserRecord.updated_at, now)]
    if name is not ...:
        actions.append(assign(UserRecord.name, rules.clean_name(name) if name is not None else None))
    if slack_user_id is not ...:
        actions.append(assign(UserRecord.slack_user_id, rules.clean_slack_user_id(slack_user_id)))
    if is_active is not ...:
        actions.append(assign(UserRecord.is_active, bool(is_active)))
    if role is not ...:
        actions.append(assign(UserRecord.role, rules.check_role(role)))
    if time_zone is not ...:
        actions.append(assign(UserRecord.time_zone, check_time_zone(time_zone) if time_zone is not None else None))
    new_email = rules.normalize_email(email) if email is not ... else None

    def attempt() -> User:
        record = _get_record(organization_id, user_id, consistent=True)
        old_email = record.email
        tx = Transaction()
        all_actions = list(actions)
        if new_email is not None and new_email != old_email:
            all_actions += [
                assign(UserRecord.email, new_email),
                assign(UserRecord.email_key, _email_key(organization_id, new_email)),
            ]
            claim_unique(tx, "new-guard", organization_id, _email_guard(new_email), user_id)
            if old_email:
                release_unique(tx, "old-guard", organization_id, _email_guard(old_email), user_id)
        # The email condition turns a concurrent email change into a retry instead of a stray guard.
        unchanged = UserRecord.email == old_email if old_email else UserRecord.email.does_not_exist()
        tx.update("user", record, all_actions, condition=UserRecord.user_id.exists() & unchanged)
        try:
            tx.commit()
        except TransactionCancelled as cancelled:
            if "new-guard" in cancelled.failed:
                raise _duplicate_email(str(new_email)) from None
            if cancelled.retryable:
                raise RetryableConflict() from None
            raise
        return _to_domain(_get_record(organization_id, user_id, consistent=True))

    updated = retry_on_conflict(attempt, what="user")
    if is_active is False:
        # A deactivated person's personal API keys stop working with them.

        revoke_keys_of_user(organization_id=organization_id, user_id=user_id, now=now)
    return updated
