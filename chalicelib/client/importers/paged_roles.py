"""Tocsin pages only owners, admins and responders (a viewer cannot acknowledge what they are
paged for, and a policy naming one is refused); a vendor pages whomever an escalation names. A
vendor's read-only person (an Opsgenie stakeholder or observer, a PagerDuty observer or read-only
user) whom an escalation policy pages directly is therefore imported as a responder, with a note,
so the imported policy pages the same people the vendor's did."""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.client import document as doc
from chalicelib.client.importers.notes import Notes

PAGEABLE_ROLES = frozenset({"owner", "admin", "responder"})


def paged_directly(policies: Sequence[doc.EscalationPolicy]) -> frozenset[str]:
    """The emails (folded) an escalation policy's level names as a target."""
    return frozenset(
        target.user.casefold()
        for policy in policies
        for level in policy.levels
        for target in level.targets
        if target.user
    )


def responders_where_paged(
    users: Sequence[doc.User], policies: Sequence[doc.EscalationPolicy], notes: Notes
) -> list[doc.User]:
    """`users`, each read-only one that a policy pages made a responder (and said so)."""
    paged = paged_directly(policies)
    kept: list[doc.User] = []
    for user in users:
        if user.role not in PAGEABLE_ROLES and user.email.casefold() in paged:
            vendor_id = user.source.id if user.source else "-"
            notes.approximate(
                "user",
                user.email,
                vendor_id,
                f"a {user.role} whom an escalation policy pages: Tocsin pages only people who can respond",
                "the responder role",
            )
            user = user.model_copy(update={"role": "responder"})
        kept.append(user)
    return kept
