"""Escalation policies: the list, a policy's levels (who, then how long before the next level),
its repeats and the services using it; owners and admins edit it.

The edit form is validated through EscalationPolicyPatch and saved by escalation's update_policy
with the version the page was read at, as PATCH /api/v1/escalation-policies/{id} does: a policy
changed by someone else in between is a 409, not a silent overwrite.
"""

from __future__ import annotations

import re
from typing import Any

from chalicelib.catalog import service as catalog
from chalicelib.console.form_problems import on_the_form
from chalicelib.console.people_choices import responders
from chalicelib.console.visits import app_path
from chalicelib.console.web import ConsolePages, Ctx, Page, Redirect
from chalicelib.directory.users import get_users
from chalicelib.errors import ValidationFailed
from chalicelib.escalation import service
from chalicelib.escalation.models import EscalationPolicyPatch
from chalicelib.escalation.steps import EscalationPolicy
from chalicelib.oncall import service as schedules

console = ConsolePages(__name__, notices={"policy_saved": "Escalation policy saved."})

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
    """Every escalation policy, newest first."""
    found = service.list_policies(organization_id=ctx.organization_id)
    return Page(
        "console/policies/list.html",
        "Escalation policies",
        section="policies",
        context={"policies": found, "names": _names(ctx, [stored.policy for stored in found])},
    )


def policy_page(ctx: Ctx) -> Page:
    """A policy's levels and repeats, the services using it, and (oncall:write) the edit form."""
    organization_id = ctx.organization_id
    stored = service.get_policy(organization_id=organization_id, policy_id=ctx.path["policy_id"])
    using = catalog.services_using_policy(organization_id=organization_id, policy_id=stored.policy_id)
    editing = ctx.can("oncall:write")
    return Page(
        "console/policies/policy.html",
        stored.policy.name,
        section="policies",
        context={
            "stored": stored,
            "policy": stored.policy,
            "names": _names(ctx, [stored.policy]),
            "services": list(catalog.get_services(organization_id=organization_id, service_keys=using).values()),
            "form": _form(ctx, stored.policy, stored.version),
            # Only people who can respond: a viewer cannot acknowledge what they are paged for.
            "people": responders(organization_id) if editing else [],
            "schedules": schedules.list_schedules(organization_id=organization_id) if editing else [],
        },
    )


def _form(ctx: Ctx, policy: EscalationPolicy, version: int) -> dict[str, Any]:
    """The edit form: the stored levels plus one blank row to add a level; what was sent after an error."""
    if ctx.request.method == "POST":
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
    levels: list[dict[str, Any]] = []
    rows: list[int] = []  # the form row of each level sent, to name problems by their inputs
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
    return Redirect(app_path(f"/escalation-policies/{stored.policy_id}"), notice="policy_saved")


def _on_the_form(error: ValidationFailed, rows: list[int]) -> ValidationFailed:
    """levels.0.delay_minutes -> level_<row>_delay: the row the person typed it in."""

    def rename(path: str) -> str:
        found = _LEVEL_FIELD.match(path)
        if found and int(found.group(1)) < len(rows):
            suffix = "delay" if found.group(2) == "delay_minutes" else "targets"
            return f"level_{rows[int(found.group(1))]}_{suffix}"
        return path

    return on_the_form(error, rename)
