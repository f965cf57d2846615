"""Who the console's forms offer: the organization's people in reading order, and the people who
can respond (the only people an escalation policy, a rotation or the fallback contacts should
page: a viewer can read an incident but not acknowledge it)."""

from __future__ import annotations

from chalicelib.auth.scopes import ROLE_SCOPES
from chalicelib.directory.users import User, list_users

RESPOND_SCOPE = "incidents:write"


def can_respond(person: User) -> bool:
    """Active, with a role that may acknowledge and resolve."""
    return person.is_active and RESPOND_SCOPE in ROLE_SCOPES.get(person.role, frozenset())


def by_name(people: list[User]) -> list[User]:
    return sorted(people, key=lambda p: ((p.name or p.email or "").lower(), p.email or "", p.user_id))


def organization_people(organization_id: str) -> list[User]:
    """Everyone: active people first, each group by name. One Query."""
    everyone = list_users(organization_id=organization_id)
    return by_name([p for p in everyone if p.is_active]) + by_name([p for p in everyone if not p.is_active])


def responders(organization_id: str) -> list[User]:
    """The people an escalation target, rotation or fallback contact list may name, by name."""
    return by_name([p for p in list_users(organization_id=organization_id, is_active=True) if can_respond(p)])
