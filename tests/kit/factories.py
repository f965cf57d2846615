"""Factories: the records most tests need, made through the domains' own services (so every rule
and index a request would write is written), with sensible defaults and keyword overrides.

    org = organization()                       # with an owner key (every scope) and a read-only key
    ana = person(org, role="responder", phones=("+15550100001",))   # email + verified SMS and voice
    checkout = service(org, "Checkout", escalation_policy_id=...)
    primary = schedule(org, ana, bo)            # weekly rotation from NOW, handoff 09:00 UTC
    policy(org, ana, primary, delay_minutes=5)  # level 1: Ana; level 2: whoever is on call
    incident(org, checkout, title="Checkout down")
    alert(org, checkout, dedup_key="db1")       # through the alert pipeline, from an integration

Every factory takes `now` (default NOW, the suite's fixed instant).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from chalicelib.settings import get_settings

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)
_numbers = itertools.count(1)


@dataclass
class Org:
    organization_id: str
    name: str
    owner_key: str
    readonly_key: str


def organization(name: str = "Acme", *, now: datetime = NOW) -> Org:
    """An organization with two service-account keys: `owner_key` (every scope) and `readonly_key`
    (incidents:read)."""
    from chalicelib.apikey import service as apikeys
    from chalicelib.auth.scopes import ALL_SCOPES
    from chalicelib.organization.service import create_organization

    made = create_organization(name=name, now=now)
    _, owner = apikeys.create_api_key(
        organization_id=made.organization_id,
        name="owner",
        kind="service_account",
        scopes=list(ALL_SCOPES),
        now=now,
        settings=get_settings(),
    )
    _, readonly = apikeys.create_api_key(
        organization_id=made.organization_id,
        name="readonly",
        kind="service_account",
        scopes=["incidents:read"],
        now=now,
        settings=get_settings(),
    )
    return Org(made.organization_id, made.name, owner, readonly)


def api_key(org: Org, *scopes: str, name: str | None = None, now: datetime = NOW) -> str:
    """A service-account key of `org` holding `scopes`."""
    from chalicelib.apikey import service as apikeys

    _, key = apikeys.create_api_key(
        organization_id=org.organization_id,
        name=name or "-".join(scopes) or "no-scopes",
        kind="service_account",
        scopes=list(scopes),
        now=now,
        settings=get_settings(),
    )
    return key


@dataclass(frozen=True)
class Person:
    user_id: str
    email: str
    role: str
    name: str
    methods: dict[str, str] = field(default_factory=dict, compare=False)  # contact method id -> address


def person(
    org: Org | str,
    name: str | None = None,
    *,
    role: str = "responder",
    email: str | None = None,
    phones: Sequence[str] = (),
    phone_types: Sequence[str] = ("sms", "voice"),
    slack_user_id: str | None = None,
    now: datetime = NOW,
) -> Person:
    """A directory user holding `role`. Email (the default method) is verified from the start; each
    of `phones` gets a verified method of each of `phone_types`, as if the code had been entered."""
    from chalicelib.contact import service as contacts
    from chalicelib.directory.users import create_user

    organization_id = org if isinstance(org, str) else org.organization_id
    number = next(_numbers)
    name = name or f"Person {number}"
    email = email or f"{name.lower().replace(' ', '.')}.{number}@acme.test"
    user = create_user(
        organization_id=organization_id, name=name, email=email, role=role, slack_user_id=slack_user_id, now=now
    )
    methods = {}
    for phone in phones:
        for method_type in phone_types:
            method = contacts.create_method(
                organization_id=organization_id,
                user_id=user.user_id,
                method_type=method_type,
                address=phone,
                label=None,
                now=now,
                proven_elsewhere=True,
                settings=get_settings(),
            )
            methods[method.contact_method_id] = phone
    return Person(user.user_id, user.email, role, name, methods)


def service(org: Org | str, name: str | None = None, *, now: datetime = NOW, **fields: Any) -> Any:
    """A service ("Service <n>" unless named; catalog.service.create_service's keywords as overrides)."""
    from chalicelib.catalog.service import create_service

    organization_id = org if isinstance(org, str) else org.organization_id
    return create_service(organization_id=organization_id, name=name or f"Service {next(_numbers)}", now=now, **fields)


def _user_id(member: Person | str) -> str:
    return member if isinstance(member, str) else member.user_id


def schedule(
    org: Org | str,
    *members: Person | str,
    name: str = "Primary",
    time_zone: str = "UTC",
    rotation: str = "weekly",
    handoff_time: str = "09:00",
    start: datetime | None = None,
    now: datetime = NOW,
    **fields: Any,
) -> Any:
    """A schedule of one layer rotating through `members` (at least one) from `start` (default
    `now`); oncall.service.create_schedule's other keywords as overrides."""
    from chalicelib.oncall.schedule import Layer
    from chalicelib.oncall.service import create_schedule, new_layer_id

    assert members, "a schedule needs at least one member"
    organization_id = org if isinstance(org, str) else org.organization_id
    layer = Layer(
        layer_id=new_layer_id(),
        name="Layer 1",
        members=tuple(_user_id(member) for member in members),
        rotation=rotation,  # type: ignore[arg-type]
        handoff_time=handoff_time,
        start=start or now,
    )
    return create_schedule(
        organization_id=organization_id, name=name, time_zone=time_zone, layers=[layer], now=now, **fields
    )


def policy(
    org: Org | str,
    *levels: Any,
    name: str = "Default",
    delay_minutes: int = 5,
    repeat_count: int = 0,
    now: datetime = NOW,
) -> Any:
    """An escalation policy with one level per argument: a person, a user id, a stored schedule, or
    a tuple of them (one level, several targets). Every level waits `delay_minutes`."""
    from chalicelib.escalation.service import create_policy
    from chalicelib.escalation.steps import Level, Target

    def target(value: Any) -> Target:
        if isinstance(value, Person | str):
            return Target("user", _user_id(value))
        return Target("schedule", value.schedule.schedule_id)

    assert levels, "a policy needs at least one level"
    built = [
        Level(tuple(target(t) for t in (level if isinstance(level, tuple) else (level,))), delay_minutes)
        for level in levels
    ]
    organization_id = org if isinstance(org, str) else org.organization_id
    return create_policy(organization_id=organization_id, name=name, levels=built, repeat_count=repeat_count, now=now)


def incident(
    org: Org | str,
    *services: Any,
    title: str = "Checkout down",
    severity: str | None = None,
    description: str | None = None,
    actor: str = "tester",
    now: datetime = NOW,
) -> Any:
    """An incident on `services` (records or service keys; a new service when none)."""
    from chalicelib.incident.service import NewIncident, create_incident

    organization_id = org if isinstance(org, str) else org.organization_id
    keys = [s if isinstance(s, str) else s.service_key for s in services] or [service(org, now=now).service_key]
    request = NewIncident(title=title, service_keys=keys, description=description, severity=severity)
    return create_incident(
        organization_id=organization_id, request=request, now=now, actor=actor, settings=get_settings()
    )


def integration(
    org: Org | str,
    on: Any = None,
    *,
    integration_type: str = "alertmanager",
    name: str | None = None,
    now: datetime = NOW,
) -> Any:
    """An integration routing to service `on` (a record or key; a new service when None), as the
    AlertOrigin the pipeline takes."""
    from chalicelib.integration import admin
    from chalicelib.integration.origin import AlertOrigin

    organization_id = org if isinstance(org, str) else org.organization_id
    target = on if on is not None else service(org, now=now)
    issued = admin.create_integration(
        organization_id=organization_id,
        integration_type=integration_type,
        name=name or f"{integration_type}-{next(_numbers)}",
        now=now,
        default_service_key=target if isinstance(target, str) else target.service_key,
        settings=get_settings(),
    )
    found = admin.find_by_routing_key(issued.routing_key, settings=get_settings())
    assert found is not None
    return AlertOrigin.of(found)


def alert(
    origin: Any,
    dedup_key: str | None = "disk-db1",
    *,
    title: str | None = None,
    action: str = "trigger",
    now: datetime = NOW,
    **fields: Any,
) -> Any:
    """An alert through the one pipeline (`ingest`) from `origin` (`integration(...)`); answers
    its IngestResult (the incident it opened or joined, the alert record)."""
    from chalicelib.integration.ingest import ingest
    from chalicelib.integration.normalized import NormalizedAlert

    title = title or f"Disk full on {dedup_key}"
    normalized = NormalizedAlert(
        source=origin.integration_type,
        action=action,  # type: ignore[arg-type]
        dedup_key=dedup_key,
        title=title,
        summary=fields.pop("summary", title),
        **fields,
    )
    return ingest(origin, normalized, now=now, settings=get_settings())
