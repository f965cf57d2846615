"""What a translation knows besides the vendor's answers: the time, what Tocsin has already, the
names given so far (vendor id -> Tocsin name, per kind), and the notes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from chalicelib.client import document as doc
from chalicelib.client.importers.notes import Notes

NAME_MAX = 100
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Existing:
    """The organization as it is, where an import must not overrule it: people's roles (an import
    never promotes or demotes someone already in Tocsin), heartbeats' enabled flag (imported
    paused, resumed at cut-over by a person), teams' members (kept), and the integration types
    the server knows."""

    roles: dict[str, str] = field(default_factory=dict)  # email, lower-cased -> role
    heartbeats_enabled: dict[str, bool] = field(default_factory=dict)  # name, case-folded -> enabled
    team_members: dict[str, list[str]] = field(default_factory=dict)  # name, case-folded -> emails
    users: dict[str, doc.User] = field(default_factory=dict)  # email, lower-cased -> as it is
    integration_types: frozenset[str] = frozenset(
        {"custom", "newrelic", "sentry", "alertmanager", "cloudwatch", "pagerduty"}
    )

    @classmethod
    def of(cls, current: doc.Document, integration_types: frozenset[str] | None = None) -> Existing:
        roles: dict[str, str] = {user.email.lower(): user.role for user in current.users or []}
        heartbeats = {beat.name.casefold(): beat.enabled for beat in current.heartbeats or []}
        members = {team.name.casefold(): list(team.members) for team in current.teams or []}
        users = {user.email.lower(): user for user in current.users or []}
        if integration_types is None:
            return cls(roles, heartbeats, members, users)
        return cls(roles, heartbeats, members, users, integration_types)

    def members(self, team: str, vendor_members: list[str]) -> list[str]:
        """A team's members: the vendor's, and whoever the team already has in Tocsin (an import
        adds people to a team, it never takes anyone out)."""
        have = {email.lower() for email in vendor_members}
        kept = [email for email in self.team_members.get(team.casefold(), []) if email.lower() not in have]
        return [*vendor_members, *kept]

    def kept_members(self, users: list[doc.User], teams: list[doc.Team]) -> list[doc.User]:
        """The people a team keeps who are not the vendor's, as they are: the document names
        every user its teams name."""
        have = {user.email.lower() for user in users}
        found: list[doc.User] = []
        for team in teams:
            for email in team.members:
                if email.lower() not in have and email.lower() in self.users:
                    have.add(email.lower())
                    found.append(self.users[email.lower()])
        return found


def clean_name(value: object, fallback: str) -> str:
    """A vendor name as a Tocsin name: one line, trimmed, at most 100 characters."""
    text = _SPACES.sub(" ", str(value or "")).strip()[:NAME_MAX].strip()
    return text or fallback


class Namer:
    """Unique names per kind, case-insensitively (as the server compares them): a second vendor
    object with a name already given gets " (2)", " (3)"..."""

    def __init__(self) -> None:
        self._taken: dict[str, set[str]] = {}

    def unique(self, kind: str, wanted: str) -> str:
        taken = self._taken.setdefault(kind, set())
        name, count = wanted, 1
        while name.casefold() in taken:
            count += 1
            suffix = f" ({count})"
            name = wanted[: NAME_MAX - len(suffix)].rstrip() + suffix
        taken.add(name.casefold())
        return name


@dataclass
class Context:
    vendor: str
    now: datetime
    existing: Existing = field(default_factory=Existing)
    notes: Notes = field(default_factory=Notes)
    names: Namer = field(default_factory=Namer)
    users: dict[str, str] = field(default_factory=dict)  # vendor user id -> email
    teams: dict[str, str] = field(default_factory=dict)  # vendor team id -> team name
    schedules: dict[str, str] = field(default_factory=dict)
    policies: dict[str, str] = field(default_factory=dict)
    services: dict[str, str] = field(default_factory=dict)

    def source(self, vendor_id: object) -> doc.Source:
        return doc.Source(vendor=self.vendor, id=str(vendor_id))

    def name(self, kind: str, raw: object, vendor_id: object) -> str:
        return self.names.unique(kind, clean_name(raw, f"{self.vendor} {vendor_id}"))


@dataclass(frozen=True)
class Intake:
    """A vendor integration and the Tocsin integration it becomes (a line of the cut-over sheet)."""

    vendor_id: str
    vendor_name: str
    vendor_type: str
    name: str  # the Tocsin integration's name
    type: str
    keeps_payload: bool
    service: str | None


@dataclass
class Translation:
    document: doc.Document
    notes: Notes
    intakes: list[Intake] = field(default_factory=list)
    heartbeats: list[str] = field(default_factory=list)  # imported heartbeats' names (paused until cut-over)
