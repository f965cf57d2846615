"""What the paging engine reads about a person: their contact methods and notification rules.

Plain values built from the items of one partition (chalicelib/contact/tables.py). An unverified
method stays listed, in `methods` and in the rules, with `verified` False: the paging engine
skips it, and the person sees the step waiting for verification.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chalicelib.contact import hooks, rules
from chalicelib.contact.rules import ContactType, Step, Urgency
from chalicelib.contact.tables import METHOD_PREFIX, RULES_ITEM_KEY, ContactRecord, user_key
from chalicelib.directory.users import User
from chalicelib.settings import Settings


@dataclass(frozen=True)
class ContactMethod:
    contact_method_id: str
    type: ContactType
    address: str
    label: str
    verified: bool
    created_at: datetime
    updated_at: datetime | None = None
    # The default email method shows the user's account email as it is now (docs/CONTACTS.md).
    follows_account_email: bool = False
    # A webhook-style method's destination, sealed (chalicelib/contact/hooks.py); None for the others.
    sealed_destination: str | None = field(default=None, repr=False)
    identity: str | None = field(default=None, repr=False)  # what a duplicate check compares

    @property
    def same_as(self) -> tuple[str, str]:
        """The (type, address) two methods of one person may not share; a hook's address is its HMAC."""
        return (self.type, self.identity or self.address)

    def destination(self, organization_id: str, user_id: str, *, settings: Settings) -> hooks.Destination | None:
        """A hook method's destination, unsealed (None for the other types)."""
        if self.sealed_destination is None:
            return None
        return hooks.unseal(
            self.sealed_destination,
            user_key=user_key(organization_id, user_id),
            contact_method_id=self.contact_method_id,
            settings=settings,
        )


@dataclass(frozen=True)
class RuleStep:
    contact_method: ContactMethod
    delay_minutes: int


@dataclass(frozen=True)
class NotificationProfile:
    organization_id: str
    user_id: str
    methods: tuple[ContactMethod, ...]
    high: tuple[RuleStep, ...]
    low: tuple[RuleStep, ...]
    version: int

    def steps(self, urgency: Urgency | str) -> list[RuleStep]:
        """The steps of `urgency` ("high" or "low"), by delay; unverified methods included."""
        if urgency == "high":
            return list(self.high)
        if urgency == "low":
            return list(self.low)
        raise ValueError(f"unknown urgency {urgency!r}")

    def method(self, contact_method_id: str) -> ContactMethod | None:
        return next((m for m in self.methods if m.contact_method_id == contact_method_id), None)


def to_method(record: ContactRecord, user: User) -> ContactMethod:
    address = str(record.address)
    if record.follows_account_email and user.email:
        address = user.email
    return ContactMethod(
        contact_method_id=str(record.contact_method_id),
        type=rules.check_type(str(record.method_type)),
        address=address,
        label=str(record.label),
        verified=bool(record.verified),
        created_at=record.created_at,
        updated_at=record.updated_at,
        follows_account_email=bool(record.follows_account_email),
        sealed_destination=record.sealed_destination,
        identity=record.destination_identity,
    )


def steps_of(stored: Any) -> list[Step]:
    return [Step(str(item["contact_method_id"]), int(item["delay_minutes"])) for item in stored or []]


def stored_steps(steps: Iterable[Step]) -> list[dict[str, Any]]:
    return [{"contact_method_id": step.contact_method_id, "delay_minutes": step.delay_minutes} for step in steps]


@dataclass(frozen=True)
class Partition:
    """The items of one user's partition as read: the rules item (None before the defaults) and
    the method items by id."""

    head: ContactRecord | None
    methods: dict[str, ContactRecord]

    @classmethod
    def of(cls, records: Iterable[ContactRecord]) -> Partition:
        head = None
        methods: dict[str, ContactRecord] = {}
        for record in records:
            if record.item_key == RULES_ITEM_KEY:
                head = record
            elif record.item_key.startswith(METHOD_PREFIX):
                methods[str(record.contact_method_id)] = record
        return cls(head, methods)

    @property
    def revision(self) -> int:
        return int(self.head.revision or 0) if self.head is not None else 0

    @property
    def version(self) -> int:
        return int(self.head.version or 0) if self.head is not None else 0

    def steps(self, urgency: Urgency) -> list[Step]:
        if self.head is None:
            return []
        return steps_of(self.head.high if urgency == "high" else self.head.low)

    def profile(self, organization_id: str, user: User) -> NotificationProfile:
        methods = sorted(
            (to_method(record, user) for record in self.methods.values()),
            key=lambda m: (m.created_at, m.contact_method_id),
        )
        by_id = {m.contact_method_id: m for m in methods}

        def rule_steps(urgency: Urgency) -> tuple[RuleStep, ...]:
            found = [
                RuleStep(by_id[step.contact_method_id], step.delay_minutes)
                for step in self.steps(urgency)
                if step.contact_method_id in by_id  # a write removes both together; never trust a dangling id
            ]
            return tuple(sorted(found, key=lambda s: s.delay_minutes))

        return NotificationProfile(
            organization_id=organization_id,
            user_id=user.user_id,
            methods=tuple(methods),
            high=rule_steps("high"),
            low=rule_steps("low"),
            version=self.version,
        )
