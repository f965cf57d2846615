"""Incidents for the console's incident tests: two services (one with a team), open and resolved
incidents at known times, and helpers that read the result back through the API."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.console.conftest import Person


@dataclass(frozen=True)
class World:
    checkout_key: str
    search_key: str
    checkout_down: str  # SEV1 on Checkout (team Payments), open, created NOW - 2 h
    search_slow: str  # SEV3 on Search (no team), open, created NOW - 1 h
    old_outage: str  # SEV2 on Checkout, resolved, created NOW - 3 days


def seed(org: Org, people: dict[str, Person]) -> World:
    from chalicelib.auth.principal import Principal
    from chalicelib.auth.scopes import ALL_SCOPES
    from chalicelib.catalog import service as services
    from chalicelib.directory import teams
    from chalicelib.incident import commands, service

    team = teams.create_team(
        organization_id=org.organization_id, name="Payments", now=NOW, member_ids=[people["responder"].user_id]
    )
    checkout = services.create_service(
        organization_id=org.organization_id, name="Checkout", now=NOW, team_id=team.team_id
    )
    search = services.create_service(organization_id=org.organization_id, name="Search", now=NOW)

    def create(title: str, key: str, severity: str, at: Any) -> str:
        request = service.NewIncident(
            title=title, service_keys=[key], severity=severity, description="Seen by a probe."
        )
        return service.create_incident(
            organization_id=org.organization_id, request=request, now=at, actor="seed", settings=get_settings()
        ).incident_number

    old = create("Old outage", checkout.service_key, "SEV2", NOW - timedelta(days=3))
    robot = Principal(
        organization_id=org.organization_id,
        credential_kind="api_key",
        scopes=frozenset(ALL_SCOPES),
        key_id="k1",
        display_name="seed",
    )
    commands.change_status(
        organization_id=org.organization_id,
        incident_number=old,
        status="resolved",
        comment=None,
        now=NOW - timedelta(days=2),
        principal=robot,
    )
    down = create("Checkout down", checkout.service_key, "SEV1", NOW - timedelta(hours=2))
    slow = create("Search slow", search.service_key, "SEV3", NOW - timedelta(hours=1))
    return World(checkout.service_key, search.service_key, down, slow, old)


def api_get(client: Any, org: Org, path: str) -> Any:
    answer = client.http.get(path, headers={"Authorization": f"Bearer {org.owner_key}"})
    assert answer.status_code == 200, answer.body
    return json.loads(answer.body)["data"]


def incident_via_api(client: Any, org: Org, number: str) -> dict[str, Any]:
    found: dict[str, Any] = api_get(client, org, f"/api/v1/incidents/{number}")
    return found
