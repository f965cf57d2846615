"""Teams: the list, a team's page (members, its services, schedules and policies), and what owners
and admins do: create, rename and describe, add and remove members.

Each action is the API's (`teams:write`): create is POST /api/v1/teams, rename and describe PATCH
/api/v1/teams/{id} (both through their request models, so the name rules and the unique-name 409
are the same), and members go through PUT and DELETE /api/v1/teams/{id}/members/{user_id}'s
`add_member` and `remove_member` (idempotent). A team's policies are the ones its services page
through and the ones that target its schedules.
"""

from __future__ import annotations

from typing import Any

from chalicelib.catalog import service as catalog
from chalicelib.console.form_problems import on_the_form
from chalicelib.console.people_choices import by_name, organization_people
from chalicelib.console.visits import app_path
from chalicelib.console.web import Confirmation, ConsolePages, Ctx, Page, Redirect
from chalicelib.directory import teams
from chalicelib.directory.models import TeamCreate, TeamPatch
from chalicelib.directory.users import get_users
from chalicelib.errors import NotFound, ValidationFailed
from chalicelib.escalation import service as policies
from chalicelib.oncall import service as schedules

console = ConsolePages(
    __name__,
    notices={
        "team_created": "Team created. Add its members below.",
        "team_saved": "Team saved.",
        "team_member_added": "Member added.",
        "team_member_removed": "Member removed.",
    },
)

WRITE = "teams:write"
LABELS = {"name": "Name", "description": "Description", "user_id": "Person", "member_ids": "Members"}


def teams_page(ctx: Ctx) -> Page:
    """Every team by name, with its member and service counts, and the form to create one."""
    organization_id = ctx.organization_id
    found = sorted(teams.list_teams(organization_id=organization_id), key=lambda t: t.name.lower())
    services_of: dict[str, int] = {}
    for service in catalog.list_services(organization_id=organization_id):
        if service.team_id:
            services_of[service.team_id] = services_of.get(service.team_id, 0) + 1
    return Page(
        "console/teams/list.html",
        "Teams",
        section="teams",
        labels=LABELS,
        context={
            "teams": found,
            "services_of": services_of,
            "typed": {"name": ctx.value("name"), "description": ctx.value("description")},
        },
    )


@console.page("/teams")
def show_teams(ctx: Ctx) -> Page:
    """The organization's teams."""
    return teams_page(ctx)


@console.action("/teams", scope=WRITE, on_error=teams_page)
def create_team(ctx: Ctx) -> Redirect:
    """Create a team (as POST /api/v1/teams)."""
    body = ctx.model(TeamCreate, {"name": ctx.value("name"), "description": ctx.value("description") or None})
    team = teams.create_team(
        organization_id=ctx.organization_id,
        name=body.name,
        now=ctx.now,
        description=body.description,
        member_ids=body.member_ids,
    )
    return Redirect(app_path(f"/teams/{team.team_id}", settings=ctx.settings), notice="team_created")


def team_page(ctx: Ctx) -> Page:
    """A team: members, services, schedules, the policies they page through; the forms (teams:write)."""
    organization_id = ctx.organization_id
    team = teams.get_team(organization_id=organization_id, team_id=ctx.path["team_id"])
    members = get_users(organization_id=organization_id, user_ids=team.member_ids)
    services = sorted(
        catalog.list_services(organization_id=organization_id, team_id=team.team_id), key=lambda s: s.name.lower()
    )
    team_schedules = sorted(
        schedules.list_schedules(organization_id=organization_id, team_id=team.team_id),
        key=lambda s: s.schedule.name.lower(),
    )
    schedule_ids = {stored.schedule_id for stored in team_schedules}
    policy_ids = {service.escalation_policy_id for service in services if service.escalation_policy_id}
    team_policies = [
        stored
        for stored in policies.list_policies(organization_id=organization_id)
        if stored.policy_id in policy_ids
        or any(t.kind == "schedule" and t.id in schedule_ids for level in stored.policy.levels for t in level.targets)
    ]
    posted = ctx.request.method == "POST"
    typed: dict[str, Any] = {
        "name": ctx.value("name") if posted else team.name,
        "description": ctx.value("description") if posted else team.description or "",
    }
    candidates = [p for p in organization_people(organization_id) if p.is_active and p.user_id not in members]
    return Page(
        "console/teams/team.html",
        team.name,
        section="teams",
        labels=LABELS,
        context={
            "team": team,
            "members": by_name(list(members.values())),
            "candidates": candidates,
            "services": services,
            "schedules": team_schedules,
            "policies": sorted(team_policies, key=lambda p: p.policy.name.lower()),
            "typed": typed,
        },
    )


@console.page("/teams/{team_id}")
def show_team(ctx: Ctx) -> Page:
    """A team's page."""
    return team_page(ctx)


@console.action("/teams/{team_id}", scope=WRITE, on_error=team_page)
def update_team(ctx: Ctx) -> Redirect:
    """Rename or describe a team (as PATCH /api/v1/teams/{id}); a blank description clears it."""
    team_id = ctx.path["team_id"]
    teams.get_team(organization_id=ctx.organization_id, team_id=team_id)  # 404 before 400 for an unknown team
    try:
        body = ctx.model(TeamPatch, {"name": ctx.value("name"), "description": ctx.value("description") or None})
    except ValidationFailed as error:  # a PATCH model reports a problem per union branch: once, at its input
        raise on_the_form(error, lambda path: path) from None
    teams.update_team(organization_id=ctx.organization_id, team_id=team_id, now=ctx.now, **body.changes())
    return Redirect(app_path(f"/teams/{team_id}", settings=ctx.settings), notice="team_saved")


@console.action("/teams/{team_id}/members", scope=WRITE, on_error=team_page)
def add_member(ctx: Ctx) -> Redirect:
    """Add a person (as PUT /api/v1/teams/{id}/members/{user_id})."""
    team_id = ctx.path["team_id"]
    user_id = ctx.value("user_id")
    if not user_id:
        raise ValidationFailed.for_field("user_id", "choose a person")
    teams.get_team(organization_id=ctx.organization_id, team_id=team_id)  # an unknown team is the page's 404
    try:
        teams.add_member(organization_id=ctx.organization_id, team_id=team_id, user_id=user_id, now=ctx.now)
    except NotFound:  # the team exists, so the person does not: the form's mistake, named at its select
        raise ValidationFailed.for_field("user_id", "no such person in this organization") from None
    return Redirect(app_path(f"/teams/{team_id}", settings=ctx.settings), notice="team_member_added")


@console.action(
    "/teams/{team_id}/members/{user_id}/remove",
    scope=WRITE,
    on_error=team_page,
    confirm=Confirmation(
        "Remove this member from the team?",
        "They stay in the organization and in any schedule or policy; only the team's list changes.",
        "Remove member",
    ),
)
def remove_member(ctx: Ctx) -> Redirect:
    """Remove a person (as DELETE /api/v1/teams/{id}/members/{user_id})."""
    team_id = ctx.path["team_id"]
    teams.remove_member(organization_id=ctx.organization_id, team_id=team_id, user_id=ctx.path["user_id"], now=ctx.now)
    return Redirect(app_path(f"/teams/{team_id}", settings=ctx.settings), notice="team_member_removed")
