"""Users, teams and services."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.api.resource import Find, Resource, each
from chalicelib.catalog import service as services
from chalicelib.catalog.models import ServiceCreate, ServiceListQuery, ServicePatch, ServiceV1
from chalicelib.directory import teams, users
from chalicelib.directory.models import (
    ProfilePatch,
    TeamCreate,
    TeamListQuery,
    TeamPatch,
    TeamV1,
    UserCreate,
    UserListQuery,
    UserPatch,
    UserV1,
)
from chalicelib.organization.service import organization_time_zone

api = OperationGroup(__name__, tag="directory")


def _searched(list_items: Callable[..., Sequence[Any]]) -> Find:
    """A list of people or teams: the organization's, narrowed by the query's q and is_active."""
    return lambda call, query: list_items(
        organization_id=call.principal.organization_id, search=query.q, is_active=query.is_active
    )


# --- services ----------------------------------------------------------------------------------


def _services_v1(call: Call, found: Sequence[services.Service]) -> list[ServiceV1]:
    """The services with their teams' names, read in one batch (none for services without a team)."""
    team_ids = [s.team_id for s in found if s.team_id]
    organization_id = call.principal.organization_id
    names = {t.team_id: t.name for t in teams.get_teams(organization_id=organization_id, team_ids=team_ids).values()}
    return [ServiceV1.of(s, names.get(s.team_id) if s.team_id else None) for s in found]


catalog = Resource(
    api, "/api/v1/services", "service_ref", ServiceV1, _services_v1, read="services:read", write="services:write"
)
catalog.listing(
    "listServices",
    "List services, newest first (their service keys are what incidents name)",
    lambda call, query: services.list_services(
        organization_id=call.principal.organization_id, is_active=query.is_active, team_id=query.team_id
    ),
    query=ServiceListQuery,
)
catalog.create(
    "createService",
    "Create a service; it gets a svc_ key and a SER-nnnnn id",
    ServiceCreate,
    catalog.by_key(services.create_service),
    errors=(400, 409),
    description="Names are unique per organization, case-insensitively (409 otherwise). "
    "A team_id must name a team of the organization. An urgency_rule's support_hours.time_zone must be "
    "in the time zone database and its end must differ from its start (400 otherwise).",
)
catalog.get("getService", "Get a service by its svc_ key or its SER-nnnnn id", services.get_service)
catalog.update(
    "updateService",
    "Update a service (at least one field; null clears optional fields)",
    ServicePatch,
    services.update_service,
    description="An urgency_rule replaces the whole rule; its support_hours.time_zone must be in the time zone "
    "database and its end must differ from its start (400 otherwise). Open incidents keep their urgency.",
)

# --- users -------------------------------------------------------------------------------------


def _users_v1(call: Call, found: Sequence[users.User]) -> list[UserV1]:
    zone = organization_time_zone(call.principal.organization_id)
    return [UserV1.of(u, zone) for u in found]


people = Resource(api, "/api/v1/users", "user_id", UserV1, _users_v1, read="users:read", write="users:write")
people.listing(
    "listUsers",
    "List or search people (for assignee and resolver lookup), newest first",
    _searched(users.list_users),
    query=UserListQuery,
)
people.create(
    "createUser",
    "Create a user; the email is unique within the organization",
    UserCreate,
    people.by_key(users.create_user),
    errors=(400, 409),
)
people.get("getUser", "Get a user", users.get_user)
people.update(
    "updateUser", "Update a user (at least one field); is_active false deactivates", UserPatch, users.update_user
)
people.update(
    "updateUserProfile",
    "Change a person's own settings (their time zone); a person may change their own with any role",
    ProfilePatch,
    users.update_user,
    suffix="/profile",
    self_param="user_id",
    errors=(400, 404),
)

# --- teams -------------------------------------------------------------------------------------


groups = Resource(api, "/api/v1/teams", "team_id", TeamV1, each(TeamV1.of), read="teams:read", write="teams:write")
groups.listing(
    "listTeams",
    "List teams, newest first",
    _searched(teams.list_teams),
    query=TeamListQuery,
)
groups.create(
    "createTeam",
    "Create a team; the name is unique within the organization, case-insensitively",
    TeamCreate,
    groups.by_key(teams.create_team),
    errors=(400, 409),
)
groups.get("getTeam", "Get a team", teams.get_team)
groups.update(
    "updateTeam",
    "Update a team (at least one field); member_ids replaces the member list",
    TeamPatch,
    teams.update_team,
)
groups.act(
    "PUT",
    "/members/{user_id}",
    "addTeamMember",
    "Add a user to a team (idempotent)",
    teams.add_member,
    errors=(404, 409),
)
groups.act(
    "DELETE",
    "/members/{user_id}",
    "removeTeamMember",
    "Remove a user from a team (idempotent)",
    teams.remove_member,
    errors=(404, 409),
)
