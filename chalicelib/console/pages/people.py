"""People: the organization's directory (role, teams, active, contact methods verified or not), a
person's page (their schedules, policies and open incidents), and what owners and admins do to
others: invite, change a role, deactivate and reactivate.

Every action is the API's: inviting is POST /api/v1/users (`create_user`, whose consumer sends the
invitation email through the pool, SES locally), a role or active change is PATCH
/api/v1/users/{id} (`update_user`, which also revokes a deactivated person's API keys), each with
the `users:write` scope and the API's request models. Two console rules guard the console's own
use: nobody changes their own role or deactivates themself here (they would lock themself out),
and the last active owner keeps the owner role.

Deactivating asks first, listing every schedule and policy that names the person; confirmed, the
person is deactivated, then taken out of rotations and policy targets (chalicelib/paging/
departures.py: removed from layers, their pending overrides removed, a layer or level left empty
removed; a schedule or policy that would be left empty keeps them and is named as needing a hand
edit). The answer lists what changed where. Reactivating does not put them back.
"""

from __future__ import annotations

from typing import Any

from chalicelib.console.form_problems import on_the_form
from chalicelib.console.people_choices import organization_people
from chalicelib.console.visits import app_path
from chalicelib.console.web import CONFIRM_FIELD, ConsolePages, Ctx, Page, Redirect
from chalicelib.contact.service import peek_methods
from chalicelib.directory.models import UserCreate, UserPatch
from chalicelib.directory.teams import list_teams
from chalicelib.directory.users import User, create_user, get_user, update_user, zone_of
from chalicelib.errors import Conflict, ValidationFailed
from chalicelib.incident import listing
from chalicelib.incident.models import IncidentListQuery
from chalicelib.organization.service import organization_time_zone
from chalicelib.paging import departures
from chalicelib.settings import Settings
from chalicelib.zones import offered_zones

console = ConsolePages(
    __name__,
    notices={
        "person_invited": "Invitation sent. They sign in with the temporary password in the email, then choose "
        "their own.",
        "person_role_changed": "Role changed. It applies from their next click.",
        "person_reactivated": "Reactivated. They can sign in again; add them back to rotations and policies "
        "where they are needed.",
    },
)

READ, WRITE = "users:read", "users:write"
PAGE_SIZE = 25
ROLES = (
    ("owner", "Owner: everything, including other owners"),
    ("admin", "Admin: everything, including people and settings"),
    ("responder", "Responder: works incidents and postmortems"),
    ("viewer", "Viewer: reads everything, changes nothing"),
)
ROLE_NAMES = {"owner": "Owner", "admin": "Admin", "responder": "Responder", "viewer": "Viewer"}
TYPE_NAMES = {"email": "Email", "slack": "Slack", "sms": "SMS", "voice": "Voice call"}
LABELS = {"name": "Name", "email": "Email", "role": "Role", "time_zone": "Time zone"}
ORGANIZATION_ZONE = ""


def _offset(ctx: Ctx) -> int:
    raw = ctx.arg("offset")
    return int(raw) if raw.isdigit() else 0


def people_page(ctx: Ctx) -> Page:
    """The list, 25 a page (active people first, by name), and the invitation form."""
    organization_id = ctx.organization_id
    everyone = organization_people(organization_id)
    offset = min(_offset(ctx), max(len(everyone) - 1, 0))
    shown = everyone[offset : offset + PAGE_SIZE]
    teams_of: dict[str, list[str]] = {}
    for team in sorted(list_teams(organization_id=organization_id), key=lambda t: t.name.lower()):
        for member in team.member_ids:
            teams_of.setdefault(member, []).append(team.name)
    rows = [
        {
            "person": person,
            "teams": teams_of.get(person.user_id, []),
            "methods": peek_methods(organization_id=organization_id, user=person, now=ctx.now),
        }
        for person in shown
    ]
    typed = {name: ctx.value(name) for name in ("name", "email", "time_zone")}
    typed["role"] = ctx.value("role", "responder")
    return Page(
        "console/people/list.html",
        "People",
        section="people",
        labels=LABELS,
        context={
            "rows": rows,
            "total": len(everyone),
            "first": offset + 1,
            "newer_link": _page_link(offset - PAGE_SIZE, settings=ctx.settings) if offset else None,
            "older_link": _page_link(offset + PAGE_SIZE, settings=ctx.settings)
            if offset + PAGE_SIZE < len(everyone)
            else None,
            "roles": ROLES,
            "role_names": ROLE_NAMES,
            "type_names": TYPE_NAMES,
            "typed": typed,
            "zones": _zone_choices(organization_time_zone(organization_id)),
        },
    )


def _page_link(offset: int, *, settings: Settings) -> str:
    return app_path("/people", settings=settings) + (f"?offset={max(offset, 0)}" if offset > 0 else "")


def _zone_choices(organization_zone: str) -> list[tuple[str, str]]:
    return [(ORGANIZATION_ZONE, f"The organization's zone ({organization_zone})")] + [
        (name, name) for name in offered_zones()
    ]


@console.page("/people")
def show_people(ctx: Ctx) -> Page:
    """Everyone in the organization."""
    return people_page(ctx)


@console.action("/people", scope=WRITE, on_error=people_page)
def invite_person(ctx: Ctx) -> Redirect:
    """Invite someone (as POST /api/v1/users): the invitation email goes out after the write."""
    data: dict[str, Any] = {"name": ctx.value("name"), "email": ctx.value("email"), "role": ctx.value("role")}
    if ctx.value("time_zone"):
        data["time_zone"] = ctx.value("time_zone")
    body = ctx.model(UserCreate, data)
    person = create_user(
        organization_id=ctx.organization_id,
        name=body.name,
        email=body.email,
        now=ctx.now,
        slack_user_id=body.slack_user_id,
        role=body.role,
        time_zone=body.time_zone,
    )
    return Redirect(app_path(f"/people/{person.user_id}", settings=ctx.settings), notice="person_invited")


def _patch(ctx: Ctx, data: dict[str, Any]) -> UserPatch:
    """PATCH /api/v1/users/{id}'s model; its `value | None` fields report a problem per union branch,
    put back on the one input."""
    try:
        return ctx.model(UserPatch, data)
    except ValidationFailed as error:
        raise on_the_form(error, lambda path: path) from None


def _person(ctx: Ctx) -> User:
    return get_user(organization_id=ctx.organization_id, user_id=ctx.path["user_id"])


def person_page(ctx: Ctx) -> Page:
    """One person: who they are, how they are reached, where they are on call and paged, what they hold."""
    organization_id = ctx.organization_id
    person = _person(ctx)
    where = departures.whereabouts(organization_id=organization_id, user_id=person.user_id, now=ctx.now)
    teams = [t for t in list_teams(organization_id=organization_id) if person.user_id in t.member_ids]
    incidents = []
    if person.email:
        query = IncidentListQuery(assigned_to=person.email, limit=PAGE_SIZE)
        incidents = listing.list_incidents(organization_id=organization_id, query=query).items
    return Page(
        "console/people/person.html",
        person.name or person.email or "Person",
        section="people",
        labels={"role": "Role"},
        context={
            "person": person,
            "person_zone": zone_of(person),
            "is_me": person.user_id == ctx.signed_in.user_id,
            "methods": peek_methods(organization_id=organization_id, user=person, now=ctx.now),
            "teams": sorted(teams, key=lambda t: t.name.lower()),
            "where": where,
            "incidents": incidents,
            "roles": ROLES,
            "role_names": ROLE_NAMES,
            "type_names": TYPE_NAMES,
            "typed_role": ctx.value("role", person.role),
        },
    )


@console.page("/people/{user_id}")
def show_person(ctx: Ctx) -> Page:
    """A person's page."""
    return person_page(ctx)


def _check_may_change(ctx: Ctx, person: User, *, new_role: str | None = None, deactivating: bool = False) -> None:
    """The console's guards before the API's change: not oneself; the last active owner stays one."""
    if person.user_id == ctx.signed_in.user_id:
        raise Conflict("You cannot change your own role or deactivate yourself here; ask another owner or admin.")
    losing_owner = person.role == "owner" and person.is_active and (deactivating or new_role not in (None, "owner"))
    if losing_owner:
        owners = [p for p in organization_people(ctx.organization_id) if p.role == "owner" and p.is_active]
        if len(owners) <= 1:
            raise Conflict(f"{person.name or person.email} is the last active owner; make someone else an owner first.")


@console.action("/people/{user_id}/role", scope=WRITE, on_error=person_page)
def change_role(ctx: Ctx) -> Redirect:
    """Change someone's role (as PATCH /api/v1/users/{id} with role)."""
    person = _person(ctx)
    body = _patch(ctx, {"role": ctx.value("role")})
    _check_may_change(ctx, person, new_role=body.role)
    update_user(organization_id=ctx.organization_id, user_id=person.user_id, now=ctx.now, **body.changes())
    return Redirect(app_path(f"/people/{person.user_id}", settings=ctx.settings), notice="person_role_changed")


@console.action("/people/{user_id}/deactivate", scope=WRITE, on_error=person_page)
def deactivate_person(ctx: Ctx) -> Page:
    """Deactivate someone (as PATCH /api/v1/users/{id} with is_active false), after a page listing
    where they are on call and paged; then take them out of those rotations and policies."""
    person = _person(ctx)
    _check_may_change(ctx, person, deactivating=True)
    if ctx.value(CONFIRM_FIELD) != "yes":
        where = departures.whereabouts(organization_id=ctx.organization_id, user_id=person.user_id, now=ctx.now)
        return Page(
            "console/people/deactivate.html",
            f"Deactivate {person.name or person.email}?",
            section="people",
            context={"person": person, "where": where},
        )
    body = _patch(ctx, {"is_active": False})
    update_user(organization_id=ctx.organization_id, user_id=person.user_id, now=ctx.now, **body.changes())
    outcomes = departures.take_out(organization_id=ctx.organization_id, user_id=person.user_id, now=ctx.now)
    return Page(
        "console/people/deactivated.html",
        f"{person.name or person.email} deactivated",
        section="people",
        context={"person": person, "outcomes": outcomes},
    )


@console.action("/people/{user_id}/reactivate", scope=WRITE, on_error=person_page)
def reactivate_person(ctx: Ctx) -> Redirect:
    """Reactivate someone (as PATCH /api/v1/users/{id} with is_active true)."""
    person = _person(ctx)
    body = _patch(ctx, {"is_active": True})
    update_user(organization_id=ctx.organization_id, user_id=person.user_id, now=ctx.now, **body.changes())
    return Redirect(app_path(f"/people/{person.user_id}", settings=ctx.settings), notice="person_reactivated")
