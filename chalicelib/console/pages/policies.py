"""Escalation policies: the list, a policy's levels (who, then how long before the next level),
its repeats, the services using it and its coverage gaps; owners and admins create, edit and
delete them.

The forms are validated through the API's EscalationPolicyCreate and EscalationPolicyPatch; an
edit is saved with the version the page was read at, as PATCH /api/v1/escalation-policies/{id}
does: a policy changed by someone else in between is a 409, not a silent overwrite. Deleting is
refused while services use the policy, naming them. Targets offered are schedules and the people
who can respond (owners, admins, responders; active), as the service requires.
"""

from __future__ import annotations

import re
from typing import Any

from chalicelib.catalog import service as catalog
from chalicelib.console.form_problems import on_the_form
from chalicelib.console.visits import app_path
from chalicelib.console.web import Confirmation, ConsolePages, Ctx, Page, Redirect
from chalicelib.directory.rules import can_respond
from chalicelib.directory.users import get_users, list_users
from chalicelib.errors import Forbidden, ValidationFailed
from chalicelib.escalation import service
from chalicelib.escalation.coverage_read import policies_gaps
from chalicelib.escalation.models import EscalationPolicyCreate, EscalationPolicyPatch
from chalicelib.escalation.steps import EscalationPolicy
from chalicelib.oncall import service as schedules
from chalicelib.oncall.coverage import coverage_window

console = ConsolePages(
    __name__,
    notices={
        "policy_saved": "Escalation policy saved.",
        "policy_created": "Escalation policy created. Point a service at it to use it.",
        "policy_deleted": "Escalation policy deleted.",
    },
)
NEW_ROWS = 3

_LEVEL_FIELD = re.compile(r"^levels\.(\d+)\.(delay_minutes|targets)")


def _names(ctx: Ctx, policies: list[EscalationPolicy]) -> dict[str, dict[str, str]]:
    """The names of every user and schedule the policies target: two BatchGets."""
    user_ids = sorted({t.id for p in policies for level in p.levels for t in level.targets if t.kind == "user"})
    schedule_ids = sorted({t.id for p in policies for level in p.levels for t in level.targets if t.kind == "schedule"})
    users = get_users(organization_id=ctx.organization_id, user_ids=user_ids) if user_ids else {}
    found = schedules.get_schedules(organization_id=ctx.organization_id, schedule_ids=schedule_ids)
    return {
        "user": {user_id: user.name or user.email or user_id for user_id, user in users.items()},
        "schedule": {schedule_id: stored.schedule.name for schedule_id, stored in found.items()},
    }


@console.page("/escalation-policies")
def show_escalation_policies(ctx: Ctx) -> Page:
    """Every escalation policy, newest first, with its coverage in the next 14 days."""
    found = service.list_policies(organization_id=ctx.organization_id)
    gaps = policies_gaps(
        organization_id=ctx.organization_id,
        policies=[stored.policy for stored in found],
        window=coverage_window(ctx.now),
    )
    return Page(
        "console/policies/list.html",
        "Escalation policies",
        section="policies",
        context={
            "policies": found,
            "names": _names(ctx, [stored.policy for stored in found]),
            "gap_counts": {policy_id: len(found) for policy_id, found in gaps.items()},
        },
    )


def _choices(ctx: Ctx) -> dict[str, Any]:
    """What a level may page: schedules, and the people who can respond."""
    organization_id = ctx.organization_id
    people = [u for u in list_users(organization_id=organization_id, is_active=True) if can_respond(u.role, True)]
    return {"people": people, "schedules": schedules.list_schedules(organization_id=organization_id)}


def policy_page(ctx: Ctx) -> Page:
    """A policy's levels and repeats, its coverage gaps, the services using it, and (oncall:write)
    the edit form."""
    organization_id = ctx.organization_id
    stored = service.get_policy(organization_id=organization_id, policy_id=ctx.path["policy_id"])
    using = catalog.services_of_policy(organization_id=organization_id, policy_id=stored.policy_id)
    gaps = policies_gaps(organization_id=organization_id, policies=[stored.policy], window=coverage_window(ctx.now))
    return Page(
        "console/policies/policy.html",
        stored.policy.name,
        section="policies",
        context={
            "stored": stored,
            "policy": stored.policy,
            "names": _names(ctx, [stored.policy]),
            "services": using,
            "gaps": gaps[stored.policy_id],
            "form": _form(ctx, stored.policy, stored.version),
            **(_choices(ctx) if ctx.can("oncall:write") else {"people": [], "schedules": []}),
        },
    )


def new_policy_page(ctx: Ctx) -> Page:
    """The form for a new policy: blank levels, or what was sent after an error."""
    if not ctx.can("oncall:write"):
        raise Forbidden.missing_scope("oncall:write")
    if ctx.request.method == "POST":
        form = _form(ctx, None, 0)
    else:
        rows = [{"targets": [], "delay": "15"} for _ in range(NEW_ROWS)]
        form = {"name": "", "repeat_count": "0", "version": "", "rows": rows}
    return Page(
        "console/policies/new.html",
        "New escalation policy",
        section="policies",
        context={"form": form, **_choices(ctx)},
    )


@console.page("/escalation-policies/new")
def new_escalation_policy(ctx: Ctx) -> Page:
    """The form for a new escalation policy (oncall:write)."""
    return new_policy_page(ctx)


@console.action("/escalation-policies", scope="oncall:write", on_error=new_policy_page)
def create_escalation_policy(ctx: Ctx) -> Redirect:
    """Create a policy (POST /api/v1/escalation-policies): rows without targets are left out."""
    levels, rows = _levels(ctx)
    try:
        body = ctx.model(
            EscalationPolicyCreate,
            {"name": ctx.value("name"), "repeat_count": ctx.value("repeat_count") or 0, "levels": levels},
        )
        stored = service.create_policy(organization_id=ctx.organization_id, now=ctx.now, **body.arguments())
    except ValidationFailed as error:
        raise _on_the_form(error, rows) from None
    return Redirect(
        app_path(f"/escalation-policies/{stored.policy_id}", settings=ctx.settings), notice="policy_created"
    )


@console.action(
    "/escalation-policies/{policy_id}/delete",
    scope="oncall:write",
    on_error=policy_page,
    confirm=Confirmation(
        "Delete this escalation policy?",
        "It cannot be brought back. Incidents already escalating keep the copy they started with.",
        "Delete policy",
    ),
)
def delete_escalation_policy(ctx: Ctx) -> Redirect:
    """Delete a policy (DELETE /api/v1/escalation-policies/{id}): 409 naming the services using it."""
    organization_id, policy_id = ctx.organization_id, ctx.path["policy_id"]
    using = catalog.services_of_policy(organization_id=organization_id, policy_id=policy_id)
    service.delete_policy(
        organization_id=organization_id,
        policy_id=policy_id,
        used_by_services=[s.service_key for s in using],
        service_names=[s.name for s in using],
    )
    return Redirect(app_path("/escalation-policies", settings=ctx.settings), notice="policy_deleted")


def _form(ctx: Ctx, policy: EscalationPolicy | None, version: int) -> dict[str, Any]:
    """The edit form: the stored levels plus one blank row to add a level; what was sent after an error."""
    if ctx.request.method == "POST" or policy is None:
        rows = [
            {"targets": ctx.values(f"level_{row}_targets"), "delay": ctx.value(f"level_{row}_delay")}
            for row in range(1, _row_count(ctx) + 1)
        ]
        return {"name": ctx.value("name"), "repeat_count": ctx.value("repeat_count"), "version": version, "rows": rows}
    rows = [
        {"targets": [f"{t.kind}:{t.id}" for t in level.targets], "delay": str(level.delay_minutes)}
        for level in policy.levels
    ]
    rows.append({"targets": [], "delay": "15"})
    return {"name": policy.name, "repeat_count": str(policy.repeat_count), "version": version, "rows": rows}


def _row_count(ctx: Ctx) -> int:
    try:
        return max(0, min(int(ctx.value("rows") or 0), 30))
    except ValueError:
        return 0


@console.page("/escalation-policies/{policy_id}")
def show_escalation_policy(ctx: Ctx) -> Page:
    """An escalation policy."""
    return policy_page(ctx)


@console.action("/escalation-policies/{policy_id}", scope="oncall:write", on_error=policy_page)
def update_escalation_policy(ctx: Ctx) -> Redirect:
    """Save a policy (PATCH /api/v1/escalation-policies/{id} with the version read): rows without
    targets are dropped, so clearing a level's targets removes the level."""
    levels, rows = _levels(ctx)
    body = {"name": ctx.value("name"), "repeat_count": ctx.value("repeat_count"), "levels": levels}
    if ctx.value("version"):
        body["version"] = ctx.value("version")
    try:
        patch = ctx.model(EscalationPolicyPatch, body)
        stored = service.update_policy(
            organization_id=ctx.organization_id,
            policy_id=ctx.path["policy_id"],
            now=ctx.now,
            expected_version=patch.version,
            **patch.domain_changes(),
        )
    except ValidationFailed as error:
        raise _on_the_form(error, rows) from None
    return Redirect(app_path(f"/escalation-policies/{stored.policy_id}", settings=ctx.settings), notice="policy_saved")


def _levels(ctx: Ctx) -> tuple[list[dict[str, Any]], list[int]]:
    """The levels the form's rows describe (rows without targets left out), and the form row of
    each, to name problems by their inputs."""
    levels: list[dict[str, Any]] = []
    rows: list[int] = []
    for row in range(1, _row_count(ctx) + 1):
        targets = ctx.values(f"level_{row}_targets")
        if not targets:
            continue
        rows.append(row)
        levels.append(
            {
                "targets": [dict(zip(("kind", "id"), target.split(":", 1), strict=False)) for target in targets],
                "delay_minutes": ctx.value(f"level_{row}_delay"),
            }
        )
    return levels, rows


def _on_the_form(error: ValidationFailed, rows: list[int]) -> ValidationFailed:
    """levels.0.delay_minutes -> level_<row>_delay: the row the person typed it in."""

    def rename(path: str) -> str:
        found = _LEVEL_FIELD.match(path)
        if found and int(found.group(1)) < len(rows):
            suffix = "delay" if found.group(2) == "delay_minutes" else "targets"
            return f"level_{rows[int(found.group(1))]}_{suffix}"
        return path

    moved = on_the_form(error, rename)
    details = moved.details if isinstance(moved.details, dict) else {}
    labelled = [{**found, "label": _label(str(found.get("field")))} for found in details.get("fields", [])]
    return ValidationFailed(moved.message, details={**details, "fields": labelled})


def _label(name: str) -> str:
    """An input's label as the form shows it."""
    found = re.match(r"^level_(\d+)_(targets|delay)$", name)
    if found:
        return f"Level {found.group(1)}: " + (
            "Page" if found.group(2) == "targets" else "Minutes before the next level"
        )
    return {"name": "Name", "repeat_count": "Times to start over after the last level", "levels": "Levels"}.get(
        name, name
    )
