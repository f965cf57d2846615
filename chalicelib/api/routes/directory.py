"""Users, teams and services."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
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
from chalicelib.pagination import Page, paginate

api = OperationGroup(__name__, tag="directory")


# --- services ----------------------------------------------------------------------------------


def _service_v1(service: services.Service) -> ServiceV1:
    team_name = None
    if service.team_id:
        team = teams.get_teams(organization_id=service.organization_id, team_ids=[service.team_id]).get(service.team_id)
        team_name = team.name if team else None
    return ServiceV1.of(service, team_name)


@api.operation(
    "GET",
    "/api/v1/services",
    operation_id="listServices",
    summary="List services, newest first (their service keys are what incidents name)",
    scope="services:read",
    query=ServiceListQuery,
    response=Page[ServiceV1],
    errors=(400,),
)
def list_services(call: Call) -> Page[ServiceV1]:
    query: ServiceListQuery = call.query
    organization_id = call.principal.organization_id
    found = services.list_services(organization_id=organization_id, is_active=query.is_active, team_id=query.team_id)
    page = paginate(found, limit=query.limit, offset=query.offset)
    team_ids = [s.team_id for s in page.items if s.team_id]
    names = {t.team_id: t.name for t in teams.get_teams(organization_id=organization_id, team_ids=team_ids).values()}
    items = [ServiceV1.of(s, names.get(s.team_id) if s.team_id else None) for s in page.items]
    return Page[ServiceV1](items=items, total=page.total, has_more=page.has_more, next_offset=page.next_offset)


@api.operation(
    "POST",
    "/api/v1/services",
    operation_id="createService",
    summary="Create a service; it gets a svc_ key and a SER-nnnnn id",
    scope="services:write",
    body=ServiceCreate,
    response=ServiceV1,
    status=201,
    errors=(400, 409),
    description="Names are unique per organization, case-insensitively (409 otherwise). "
    "A team_id must name a team of the organization. An urgency_rule's support_hours.time_zone must be "
    "in the time zone database and its end must differ from its start (400 otherwise).",
)
def create_service(call: Call) -> ServiceV1:
    body: ServiceCreate = call.body
    service = services.create_service(
        organization_id=call.principal.organization_id,
        name=body.name,
        now=call.now,
        description=body.description,
        team_id=body.team_id,
        default_severity=body.default_severity,
        escalation_policy_id=body.escalation_policy_id,
        urgency_rule=body.rule(),
        alert_grouping=body.grouping(),
    )
    return _service_v1(service)


@api.operation(
    "GET",
    "/api/v1/services/{service_ref}",
    operation_id="getService",
    summary="Get a service by its svc_ key or its SER-nnnnn id",
    scope="services:read",
    response=ServiceV1,
    errors=(404,),
)
def get_service(call: Call) -> ServiceV1:
    service = services.get_service(organization_id=call.principal.organization_id, service_ref=call.path["service_ref"])
    return _service_v1(service)


@api.operation(
    "PATCH",
    "/api/v1/services/{service_ref}",
    operation_id="updateService",
    summary="Update a service (at least one field; null clears optional fields)",
    scope="services:write",
    body=ServicePatch,
    response=ServiceV1,
    errors=(400, 404, 409),
    description="An urgency_rule replaces the whole rule; its support_hours.time_zone must be in the time zone "
    "database and its end must differ from its start (400 otherwise). Open incidents keep their urgency.",
)
def update_service(call: Call) -> ServiceV1:
    body: ServicePatch = call.body
    service = services.update_service(
        organization_id=call.principal.organization_id,
        service_ref=call.path["service_ref"],
        now=call.now,
        **body.changes(),
    )
    return _service_v1(service)


# --- users -------------------------------------------------------------------------------------


@api.operation(
    "GET",
    "/api/v1/users",
    operation_id="listUsers",
    summary="List or search people (for assignee and resolver lookup), newest first",
    scope="users:read",
    query=UserListQuery,
    response=Page[UserV1],
    errors=(400,),
)
def list_users(call: Call) -> Page[UserV1]:
    query: UserListQuery = call.query
    organization_id = call.principal.organization_id
    found = users.list_users(organization_id=organization_id, search=query.q, is_active=query.is_active)
    zone = organization_time_zone(organization_id)
    return paginate([UserV1.of(u, zone) for u in found], limit=query.limit, offset=query.offset)


@api.operation(
    "POST",
    "/api/v1/users",
    operation_id="createUser",
    summary="Create a user; the email is unique within the organization",
    scope="users:write",
    body=UserCreate,
    response=UserV1,
    status=201,
    errors=(400, 409),
)
def create_user(call: Call) -> UserV1:
    body: UserCreate = call.body
    user = users.create_user(
        organization_id=call.principal.organization_id,
        name=body.name,
        email=body.email,
        now=call.now,
        slack_user_id=body.slack_user_id,
        role=body.role,
        time_zone=body.time_zone,
    )
    return _user_v1(user)


@api.operation(
    "GET",
    "/api/v1/users/{user_id}",
    operation_id="getUser",
    summary="Get a user",
    scope="users:read",
    response=UserV1,
    errors=(404,),
)
def get_user(call: Call) -> UserV1:
    return _user_v1(users.get_user(organization_id=call.principal.organization_id, user_id=call.path["user_id"]))


@api.operation(
    "PATCH",
    "/api/v1/users/{user_id}",
    operation_id="updateUser",
    summary="Update a user (at least one field); is_active false deactivates",
    scope="users:write",
    body=UserPatch,
    response=UserV1,
    errors=(400, 404, 409),
)
def update_user(call: Call) -> UserV1:
    body: UserPatch = call.body
    user = users.update_user(
        organization_id=call.principal.organization_id,
        user_id=call.path["user_id"],
        now=call.now,
        **body.changes(),
    )
    return _user_v1(user)


@api.operation(
    "PATCH",
    "/api/v1/users/{user_id}/profile",
    operation_id="updateUserProfile",
    summary="Change a person's own settings (their time zone); a person may change their own with any role",
    scope="users:write",
    self_param="user_id",
    body=ProfilePatch,
    response=UserV1,
    errors=(400, 404),
)
def update_profile(call: Call) -> UserV1:
    body: ProfilePatch = call.body
    user = users.update_user(
        organization_id=call.principal.organization_id,
        user_id=call.path["user_id"],
        now=call.now,
        **body.changes(),
    )
    return _user_v1(user)


def _user_v1(user: users.User) -> UserV1:
    return UserV1.of(user, organization_time_zone(user.organization_id))


# --- teams -------------------------------------------------------------------------------------


@api.operation(
    "GET",
    "/api/v1/teams",
    operation_id="listTeams",
    summary="List teams, newest first",
    scope="teams:read",
    query=TeamListQuery,
    response=Page[TeamV1],
    errors=(400,),
)
def list_teams(call: Call) -> Page[TeamV1]:
    query: TeamListQuery = call.query
    found = teams.list_teams(organization_id=call.principal.organization_id, search=query.q, is_active=query.is_active)
    return paginate([TeamV1.of(t) for t in found], limit=query.limit, offset=query.offset)


@api.operation(
    "POST",
    "/api/v1/teams",
    operation_id="createTeam",
    summary="Create a team; the name is unique within the organization, case-insensitively",
    scope="teams:write",
    body=TeamCreate,
    response=TeamV1,
    status=201,
    errors=(400, 409),
)
def create_team(call: Call) -> TeamV1:
    body: TeamCreate = call.body
    team = teams.create_team(
        organization_id=call.principal.organization_id,
        name=body.name,
        now=call.now,
        description=body.description,
        member_ids=body.member_ids,
    )
    return TeamV1.of(team)


@api.operation(
    "GET",
    "/api/v1/teams/{team_id}",
    operation_id="getTeam",
    summary="Get a team",
    scope="teams:read",
    response=TeamV1,
    errors=(404,),
)
def get_team(call: Call) -> TeamV1:
    return TeamV1.of(teams.get_team(organization_id=call.principal.organization_id, team_id=call.path["team_id"]))


@api.operation(
    "PATCH",
    "/api/v1/teams/{team_id}",
    operation_id="updateTeam",
    summary="Update a team (at least one field); member_ids replaces the member list",
    scope="teams:write",
    body=TeamPatch,
    response=TeamV1,
    errors=(400, 404, 409),
)
def update_team(call: Call) -> TeamV1:
    body: TeamPatch = call.body
    team = teams.update_team(
        organization_id=call.principal.organization_id,
        team_id=call.path["team_id"],
        now=call.now,
        **body.changes(),
    )
    return TeamV1.of(team)


@api.operation(
    "PUT",
    "/api/v1/teams/{team_id}/members/{user_id}",
    operation_id="addTeamMember",
    summary="Add a user to a team (idempotent)",
    scope="teams:write",
    response=TeamV1,
    errors=(404, 409),
)
def add_team_member(call: Call) -> TeamV1:
    team = teams.add_member(
        organization_id=call.principal.organization_id,
        team_id=call.path["team_id"],
        user_id=call.path["user_id"],
        now=call.now,
    )
    return TeamV1.of(team)


@api.operation(
    "DELETE",
    "/api/v1/teams/{team_id}/members/{user_id}",
    operation_id="removeTeamMember",
    summary="Remove a user from a team (idempotent)",
    scope="teams:write",
    response=TeamV1,
    errors=(404, 409),
)
def remove_team_member(call: Call) -> TeamV1:
    team = teams.remove_member(
        organization_id=call.principal.organization_id,
        team_id=call.path["team_id"],
        user_id=call.path["user_id"],
        now=call.now,
    )
    return TeamV1.of(team)
