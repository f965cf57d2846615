"""Contact methods and notification rules: use cases, and `profile` for the paging engine.

Reads are one consistent Query of the user's partition. The first read of a user who has no
rules item yet writes the defaults (the account email, plus Slack when the user has a Slack id,
at 0 minutes for both urgencies) in one transaction of conditional puts with deterministic ids:
racing first reads write the same items and exactly one transaction wins; existing users get
their defaults the same way, on first read.

Writes that change the set of methods (create, delete, a new address) are transactions with the
rules item, conditioned on its `revision`; a lost race is re-read and re-checked
(`retry_on_conflict`). The rules' `version` is what a client sends back to make a PUT conditional.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from types import EllipsisType

from pynamodb.expressions.update import Action

from chalicelib import clock
from chalicelib.contact import hooks, rules
from chalicelib.contact.profile import ContactMethod, NotificationProfile, Partition, stored_steps, to_method
from chalicelib.contact.rules import Step
from chalicelib.contact.tables import RULES_ITEM_KEY, ContactRecord, method_item_key, user_key
from chalicelib.directory import users
from chalicelib.directory.users import User
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.settings import Settings
from chalicelib.store import (
    RetryableConflict,
    Transaction,
    TransactionCancelled,
    absent,
    assign,
    retry_on_conflict,
    update_if,
)

WHAT = "contact methods"


def get_user(organization_id: str, user_id: str) -> User:
    """The directory user; 404 for an unknown id or a user of another organization."""
    return users.get_user(organization_id=organization_id, user_id=user_id)


def profile(organization_id: str, user: User, *, now: datetime | None = None) -> NotificationProfile:
    """The user's contact methods and rules: one Query (plus the defaults' write the first time)."""
    return _read(organization_id, user, now or clock.now()).profile(organization_id, user)


def _query(organization_id: str, user_id: str) -> Partition:
    return Partition.of(ContactRecord.query(user_key(organization_id, user_id), consistent_read=True))


def _read(organization_id: str, user: User, now: datetime) -> Partition:
    partition = _query(organization_id, user.user_id)
    if partition.head is not None:
        return partition
    _write_defaults(organization_id, user, now)
    partition = _query(organization_id, user.user_id)
    if partition.head is None:  # pragma: no cover - the write above or a racing one put it
        raise Conflict("The contact methods were being created concurrently; retry the request.")
    return partition


def _write_defaults(organization_id: str, user: User, now: datetime) -> None:
    """Put the rules item and the default methods, all only if absent; losing the race is fine."""
    key = user_key(organization_id, user.user_id)
    defaults = rules.default_methods(user.email, user.slack_user_id)
    steps = stored_steps(rules.default_steps(defaults))
    tx = Transaction()
    head = ContactRecord(
        key,
        RULES_ITEM_KEY,
        organization_id=organization_id,
        user_id=user.user_id,
        created_at=now,
        high=steps,
        low=list(steps),
        version=1,
        revision=1,
    )
    tx.put("rules", head, condition=absent(ContactRecord))
    for method in defaults:
        record = ContactRecord(
            key,
            method_item_key(method.contact_method_id),
            organization_id=organization_id,
            user_id=user.user_id,
            created_at=now,
            contact_method_id=method.contact_method_id,
            method_type=method.type,
            address=method.address,
            label=method.label,
            verified=True,
            follows_account_email=method.follows_account_email or None,
        )
        tx.put(method.contact_method_id, record, condition=absent(ContactRecord))
    try:
        tx.commit()
    except TransactionCancelled as cancelled:
        if not cancelled.retryable:
            raise


def _bump(tx: Transaction, partition: Partition, extra: Sequence[Action] = ()) -> None:
    """Add the rules item's revision bump, conditioned on the revision read, to `tx`."""
    assert partition.head is not None
    revision = partition.revision
    tx.update(
        "rules",
        partition.head,
        [ContactRecord.revision.set(revision + 1), *extra],
        condition=ContactRecord.revision == revision,
    )


def _commit(tx: Transaction) -> None:
    try:
        tx.commit()
    except TransactionCancelled as cancelled:
        if cancelled.retryable:
            raise RetryableConflict() from None
        raise


def _method_record(partition: Partition, contact_method_id: str) -> ContactRecord:
    record = partition.methods.get(contact_method_id)
    if record is None:
        raise NotFound("Contact method not found.")
    return record


# --- methods -------------------------------------------------------------------------------------


def list_methods(*, organization_id: str, user_id: str, now: datetime) -> list[ContactMethod]:
    """Oldest first (the defaults lead)."""
    return list(profile(organization_id, get_user(organization_id, user_id), now=now).methods)


def peek_methods(*, organization_id: str, user: User, now: datetime) -> list[ContactMethod]:
    """Another person's methods for a page that only shows them (the people list): one Query that
    never writes. Someone who has none stored yet is shown the defaults their first read will store."""
    partition = Partition.of(ContactRecord.query(user_key(organization_id, user.user_id)))
    if partition.head is not None:
        return list(partition.profile(organization_id, user).methods)
    return [
        ContactMethod(d.contact_method_id, d.type, d.address, d.label, True, now, None, d.follows_account_email)
        for d in rules.default_methods(user.email, user.slack_user_id)
    ]


def get_method(*, organization_id: str, user_id: str, contact_method_id: str, now: datetime) -> ContactMethod:
    user = get_user(organization_id, user_id)
    found = profile(organization_id, user, now=now).method(contact_method_id)
    if found is None:
        raise NotFound("Contact method not found.")
    return found


def create_method(
    *,
    organization_id: str,
    user_id: str,
    method_type: str,
    address: str,
    label: str | None,
    now: datetime,
    proven_elsewhere: bool = False,
    secret: str | None = None,
    settings: Settings,
) -> ContactMethod:
    """Email and Slack methods are verified at once; sms, voice and the webhook-style types wait
    for a code (409 on a duplicate (type, address) or past the limit). `secret`: an ntfy method's
    access token. `proven_elsewhere`: the number was verified outside this service (the local
    demo data); never set from a request."""
    user = get_user(organization_id, user_id)
    kind = rules.check_type(method_type)
    destination: hooks.Destination | None = None
    if rules.is_hook(kind):
        destination = hooks.parse(kind, address, secret, settings=settings)
        clean_address = hooks.hint(kind, destination)
    else:
        if secret is not None:
            raise ValidationFailed.for_field("secret", "only ntfy methods take a secret (an access token)")
        clean_address = rules.normalize_address(kind, address)
    clean_label = rules.clean_label(label, kind)
    verified = proven_elsewhere or rules.verified_on_creation(kind)
    identity = hooks.identity(kind, destination, settings=settings) if destination is not None else None

    def attempt() -> ContactMethod:
        partition = _read(organization_id, user, now)
        existing = [m.same_as for m in partition.profile(organization_id, user).methods]
        rules.check_can_add(
            existing, kind, identity or clean_address, count=len(partition.methods), shown=clean_address
        )
        method_id = str(uuid.uuid4())
        key = user_key(organization_id, user.user_id)
        sealed = destination and hooks.seal(destination, user_key=key, contact_method_id=method_id, settings=settings)
        record = ContactRecord(
            user_key(organization_id, user.user_id),
            method_item_key(method_id),
            organization_id=organization_id,
            user_id=user.user_id,
            created_at=now,
            contact_method_id=method_id,
            method_type=kind,
            address=clean_address,
            label=clean_label,
            verified=verified,
            address_key=rules.address_key(kind, clean_address, verified),
            sealed_destination=sealed,
            destination_identity=identity,
        )
        tx = Transaction()
        tx.put("method", record, condition=absent(ContactRecord))
        _bump(tx, partition)
        _commit(tx)
        return to_method(record, user)

    return retry_on_conflict(attempt, what=WHAT)


def update_method(
    *,
    organization_id: str,
    user_id: str,
    contact_method_id: str,
    now: datetime,
    label: str | EllipsisType | None = ...,
    address: str | EllipsisType = ...,
    settings: Settings,
) -> ContactMethod:
    """Change the label and/or the address (`...` means unchanged). A new phone number is
    unverified again and any code sent to the old one stops working."""
    user = get_user(organization_id, user_id)

    def attempt() -> ContactMethod:
        partition = _read(organization_id, user, now)
        record = _method_record(partition, contact_method_id)
        kind = str(record.method_type)
        actions: list[Action] = [assign(ContactRecord.updated_at, now)]
        if label is not ...:
            actions.append(assign(ContactRecord.label, rules.clean_label(label, kind)))
        if rules.is_hook(kind) and address is not ...:
            return _new_destination(partition, record, kind, address, actions)
        new_address = None if address is ... else rules.normalize_address(kind, address)
        current = to_method(record, user).address
        if new_address is None or new_address == current:
            if not update_if(record, actions, ContactRecord.item_key.exists()):
                raise RetryableConflict()
            return to_method(record, user)
        if record.follows_account_email:
            raise ValidationFailed.for_field(
                "address", "this method follows the user's account email; change the user's email instead"
            )
        others = [m.same_as for m in partition.profile(organization_id, user).methods]
        others.remove((rules.check_type(kind), current))
        rules.check_can_add(others, kind, new_address, count=0)
        actions.append(assign(ContactRecord.address, new_address))
        if rules.is_phone(kind):
            actions += [
                assign(ContactRecord.verified, False),
                assign(ContactRecord.address_key, None),
                assign(ContactRecord.code_digest, None),
                assign(ContactRecord.code_expires_at, None),
                assign(ContactRecord.code_attempts, None),
            ]
        tx = Transaction()
        tx.update("method", record, actions, condition=ContactRecord.address == record.address)
        _bump(tx, partition)
        _commit(tx)
        return to_method(_query(organization_id, user.user_id).methods[contact_method_id], user)

    def _new_destination(
        partition: Partition, record: ContactRecord, kind: str, address: str, actions: list[Action]
    ) -> ContactMethod:
        """A hook method's new URL: sealed anew and unverified again (the code proves the new one)."""
        destination = hooks.parse(kind, address, None, settings=settings)
        identity = hooks.identity(kind, destination, settings=settings)
        if identity == record.destination_identity:
            if not update_if(record, actions, ContactRecord.item_key.exists()):
                raise RetryableConflict()
            return to_method(record, user)
        others = [m.same_as for m in partition.profile(organization_id, user).methods if m != to_method(record, user)]
        shown = hooks.hint(kind, destination)
        rules.check_can_add(others, kind, identity, count=0, shown=shown)
        key = str(record.user_key)
        sealed = hooks.seal(destination, user_key=key, contact_method_id=contact_method_id, settings=settings)
        actions += [
            assign(ContactRecord.address, shown),
            assign(ContactRecord.sealed_destination, sealed),
            assign(ContactRecord.destination_identity, identity),
            assign(ContactRecord.verified, False),
            assign(ContactRecord.code_digest, None),
            assign(ContactRecord.code_expires_at, None),
            assign(ContactRecord.code_attempts, None),
        ]
        tx = Transaction()
        tx.update("method", record, actions, condition=ContactRecord.address == record.address)
        _bump(tx, partition)
        _commit(tx)
        return to_method(_query(organization_id, user.user_id).methods[contact_method_id], user)

    return retry_on_conflict(attempt, what=WHAT)


def delete_method(*, organization_id: str, user_id: str, contact_method_id: str, now: datetime) -> None:
    """Delete the method and, in the same transaction, every rule step that names it."""
    user = get_user(organization_id, user_id)

    def attempt() -> None:
        partition = _read(organization_id, user, now)
        record = _method_record(partition, contact_method_id)
        high, low = partition.steps("high"), partition.steps("low")
        new_high, new_low = rules.without_method(high, contact_method_id), rules.without_method(low, contact_method_id)
        extra: list[Action] = []
        if (new_high, new_low) != (high, low):
            extra = [
                ContactRecord.high.set(stored_steps(new_high)),
                ContactRecord.low.set(stored_steps(new_low)),
                ContactRecord.version.set(partition.version + 1),
                assign(ContactRecord.updated_at, now),
            ]
        tx = Transaction()
        tx.delete("method", record, condition=ContactRecord.item_key.exists())
        _bump(tx, partition, extra)
        _commit(tx)

    retry_on_conflict(attempt, what=WHAT)


# --- rules ---------------------------------------------------------------------------------------


def get_rules(*, organization_id: str, user_id: str, now: datetime) -> NotificationProfile:
    return profile(organization_id, get_user(organization_id, user_id), now=now)


def _stale(expected: int, current: int) -> Conflict:
    return Conflict(
        f"The notification rules changed since version {expected}; they are now at version {current}. "
        "Read them again and reapply your change.",
        details={"expected_version": expected, "current_version": current},
    )


def put_rules(
    *,
    organization_id: str,
    user_id: str,
    high: Sequence[Step],
    low: Sequence[Step],
    now: datetime,
    expected_version: int | None = None,
) -> NotificationProfile:
    """Replace both urgencies' steps. With `expected_version`, only if the rules are still at it (409)."""
    user = get_user(organization_id, user_id)

    def attempt() -> NotificationProfile:
        partition = _read(organization_id, user, now)
        if expected_version is not None and partition.version != expected_version:
            raise _stale(expected_version, partition.version)
        ids = list(partition.methods)
        clean_high = rules.clean_steps("high", high, ids)
        clean_low = rules.clean_steps("low", low, ids)
        assert partition.head is not None
        actions = [
            ContactRecord.high.set(stored_steps(clean_high)),
            ContactRecord.low.set(stored_steps(clean_low)),
            ContactRecord.version.set(partition.version + 1),
            ContactRecord.revision.set(partition.revision + 1),
            assign(ContactRecord.updated_at, now),
        ]
        # The revision condition: no method was added or deleted since the ids were checked.
        if not update_if(partition.head, actions, ContactRecord.revision == partition.revision):
            raise RetryableConflict()
        return Partition(partition.head, partition.methods).profile(organization_id, user)

    return retry_on_conflict(attempt, what=WHAT)


# --- the address index ---------------------------------------------------------------------------


def owners_of_phone(*, method_type: str, address: str) -> list[tuple[str, str, str]]:
    """(organization_id, user_id, contact_method_id) of every verified `method_type` method with
    this E.164 number: one Query of the sparse address index (for replies by SMS)."""
    key = rules.address_key(method_type, address, verified=True)
    if key is None:
        return []
    return [
        (str(r.organization_id), str(r.user_id), str(r.contact_method_id)) for r in ContactRecord.by_address.query(key)
    ]
