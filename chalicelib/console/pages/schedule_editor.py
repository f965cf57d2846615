"""Creating a schedule and editing its layers, with a preview of the next two weeks before saving.

The form (chalicelib.console.schedule_form) posts to itself: adding, removing or moving a layer
and "Preview" answer the form again with the change made and nothing saved; the preview lays out
the final shifts the edited schedule would have, by the same pure rules as the API
(`validate_schedule`, `rotation.final_shifts`), with its overrides, and its coverage gaps.
"Save" calls the service functions of POST /api/v1/schedules and PATCH /api/v1/schedules/{id},
the latter with the version the form was read at: someone else's save in between is a 409 that
keeps the form (and its next save replaces theirs, as the page says).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from chalicelib.console.pages.oncall import WEEKDAYS, schedule_page
from chalicelib.console.schedule_form import (
    ROTATIONS,
    Built,
    ScheduleForm,
    apply_op,
    build_layers,
    form_of,
    lead_minutes,
    member_options,
    on_the_form,
    parse_op,
    preview_schedule,
    read_form,
)
from chalicelib.console.schedule_form import WEEKDAYS as RESTRICTION_DAYS
from chalicelib.console.schedule_view import Day, days_of, local_input, window_start
from chalicelib.console.visits import app_path
from chalicelib.console.web import Answer, Confirmation, ConsolePages, Ctx, Page, Redirect
from chalicelib.directory.rules import can_respond
from chalicelib.directory.teams import list_teams
from chalicelib.directory.users import list_users
from chalicelib.errors import Conflict, Forbidden, ValidationFailed
from chalicelib.escalation import service as policies
from chalicelib.escalation.coverage import PolicyGap
from chalicelib.oncall import service
from chalicelib.oncall.coverage import coverage_window, schedule_gaps
from chalicelib.oncall.notice_index import check_lead_minutes
from chalicelib.oncall.rotation import final_shifts
from chalicelib.oncall.service import StoredSchedule
from chalicelib.oncall.validation import validate_schedule
from chalicelib.oncall.wallclock import zone_for
from chalicelib.zones import offered_zones

console = ConsolePages(
    __name__,
    notices={
        "schedule_created": "Schedule created. Its shifts for the next two weeks are below.",
        "schedule_saved": "Schedule saved. The shifts below follow the new layers.",
        "schedule_deleted": "Schedule deleted.",
    },
)


@dataclass(frozen=True)
class Preview:
    days: list[Day]
    gaps: list[PolicyGap]
    layer_names: dict[str, str]
    zone: str


def _require_write(ctx: Ctx) -> None:
    if not ctx.can("oncall:write"):
        raise Forbidden.missing_scope("oncall:write")


def _stored(ctx: Ctx) -> StoredSchedule | None:
    schedule_id = ctx.path.get("schedule_id")
    return service.get_schedule(organization_id=ctx.organization_id, schedule_id=schedule_id) if schedule_id else None


def _people(ctx: Ctx) -> list[tuple[str, str]]:
    """The people a layer may rotate through: active, with a role that can respond, by name."""
    found = [u for u in list_users(organization_id=ctx.organization_id, is_active=True) if can_respond(u.role, True)]
    return sorted(((u.user_id, u.name or u.email or u.user_id) for u in found), key=lambda p: p[1].casefold())


def _next_hour(ctx: Ctx, form: ScheduleForm) -> str:
    return local_input((ctx.now + timedelta(hours=1)).replace(minute=0, second=0, microsecond=0), form.zone)


def _editor(ctx: Ctx, stored: StoredSchedule | None, form: ScheduleForm, preview: Preview | None = None) -> Page:
    people = _people(ctx)
    names = dict(people)
    title = f"Edit {stored.schedule.name}" if stored else "New schedule"
    zones = list(offered_zones())
    if form.time_zone and form.time_zone not in zones:
        zones.insert(0, form.time_zone)
    return Page(
        "console/oncall/schedule_edit.html",
        title,
        section="schedules",
        context={
            "stored": stored,
            "form": form,
            "preview": preview,
            "action": app_path(
                f"/schedules/{stored.schedule_id}/edit" if stored else "/schedules/new", settings=ctx.settings
            ),
            "member_options": [member_options(people, layer.members) for layer in form.layers],
            "names": names,
            "rotations": ROTATIONS,
            "restriction_days": list(enumerate(RESTRICTION_DAYS)),
            "zones": [(zone, zone) for zone in zones],
            "teams": [(team.team_id, team.name) for team in list_teams(organization_id=ctx.organization_id)],
            "weekdays": WEEKDAYS,
        },
    )


def editor_page(ctx: Ctx) -> Page:
    """The editor as stored, or (after a refused POST) as sent."""
    stored = _stored(ctx)
    if ctx.request.method == "POST":
        return _editor(ctx, stored, read_form(ctx.form))
    schedule = stored.schedule if stored else None
    form = form_of(
        schedule,
        version=stored.version if stored else None,
        lead=stored.handoff_notice_lead_minutes if stored else 0,
        now=ctx.now,
        zone=ctx.zone,
    )
    return _editor(ctx, stored, form)


@console.page("/schedules/new")
def new_schedule(ctx: Ctx) -> Page:
    """The form for a new schedule (oncall:write)."""
    _require_write(ctx)
    return editor_page(ctx)


@console.page("/schedules/{schedule_id}/edit")
def edit_schedule(ctx: Ctx) -> Page:
    """A schedule's settings and layers, editable (oncall:write)."""
    _require_write(ctx)
    return editor_page(ctx)


@console.action("/schedules/new", scope="oncall:write", on_error=editor_page)
def create_schedule(ctx: Ctx) -> Answer:
    """Change the new schedule's form, preview it, or create it (POST /api/v1/schedules)."""
    return _submit(ctx, None)


@console.action("/schedules/{schedule_id}/edit", scope="oncall:write", on_error=editor_page)
def save_schedule(ctx: Ctx) -> Answer:
    """Change the form, preview it, or save it (PATCH /api/v1/schedules/{id} with the version read)."""
    return _submit(ctx, _stored(ctx))


def _preview(ctx: Ctx, form: ScheduleForm, built: Built, stored: StoredSchedule | None) -> Preview:
    schedule = preview_schedule(
        stored.schedule_id if stored else "sch_preview", form, built, stored.schedule if stored else None
    )
    try:
        validate_schedule(schedule)
        check_lead_minutes(lead_minutes(form))
    except ValidationFailed as error:
        raise on_the_form(error, built) from None
    zone = zone_for(schedule.time_zone)
    first_day, since, until = window_start(zone, ctx.now)
    shifts = final_shifts(schedule, since, until)
    known = {user_id for user_id, _ in _people(ctx)}
    gaps = schedule_gaps(schedule, coverage_window(ctx.now), pageable=known.__contains__)
    return Preview(
        days=days_of(zone, first_day, shifts, today=first_day),
        gaps=[PolicyGap(start, end, ()) for start, end in gaps],
        layer_names={layer.layer_id: layer.name for layer in schedule.layers},
        zone=schedule.time_zone,
    )


def _submit(ctx: Ctx, stored: StoredSchedule | None) -> Answer:
    form = read_form(ctx.form)
    op, number = parse_op(ctx.value("op"))
    if op not in ("preview", "save"):
        return _editor(ctx, stored, apply_op(form, op, number, _next_hour(ctx, form)))
    built = build_layers(
        form, {user_id for user_id, _ in _people(ctx)} | _current_members(stored), service.new_layer_id
    )
    if op == "preview":
        return _editor(ctx, stored, form, _preview(ctx, form, built, stored))
    fields: dict[str, Any] = {
        "name": form.name,
        "time_zone": form.time_zone,
        "team_id": form.team_id or None,
        "layers": built.layers,
        "handoff_notice_lead_minutes": lead_minutes(form),
        "now": ctx.now,
    }
    try:
        if stored is None:
            created = service.create_schedule(organization_id=ctx.organization_id, **fields)
            return Redirect(
                app_path(f"/schedules/{created.schedule_id}", settings=ctx.settings), notice="schedule_created"
            )
        version = int(form.version) if form.version.isdigit() else None
        service.update_schedule(
            organization_id=ctx.organization_id, schedule_id=stored.schedule_id, expected_version=version, **fields
        )
    except ValidationFailed as error:
        raise on_the_form(error, built) from None
    except Conflict as error:
        raise _stale(ctx, error) from None
    return Redirect(app_path(f"/schedules/{stored.schedule_id}", settings=ctx.settings), notice="schedule_saved")


def _current_members(stored: StoredSchedule | None) -> set[str]:
    """People already in the layers stay choosable (the service says whether they may stay)."""
    return {m for layer in stored.schedule.layers for m in layer.members} if stored else set()


def _stale(ctx: Ctx, error: Conflict) -> Conflict:
    """Someone saved in between: keep the form, and let its next save replace theirs."""
    details = error.details if isinstance(error.details, dict) else {}
    current = details.get("current_version")
    if current is None:
        return error
    ctx.form["version"] = [str(current)]
    return Conflict(
        f"Someone saved this schedule after you opened it (it is now at version {current}). Your changes are "
        "still below: Save again to replace theirs, or open the schedule in another tab to see what they changed.",
        details=details,
    )


@console.action(
    "/schedules/{schedule_id}/delete",
    scope="oncall:write",
    on_error=schedule_page,
    confirm=Confirmation(
        "Delete this schedule?",
        "Its layers, overrides and cover requests go, and its calendar feeds stop working. Escalation policies "
        "that page it must be changed first.",
        "Delete schedule",
    ),
)
def delete_schedule(ctx: Ctx) -> Redirect:
    """Delete a schedule (DELETE /api/v1/schedules/{id}: 409 naming the policies that page it)."""
    organization_id, schedule_id = ctx.organization_id, ctx.path["schedule_id"]
    using = policies.policies_of_schedule(organization_id=organization_id, schedule_id=schedule_id)
    service.delete_schedule(
        organization_id=organization_id,
        schedule_id=schedule_id,
        used_by_policies=[p.policy_id for p in using],
        policy_names=[p.policy.name for p in using],
    )
    return Redirect(app_path("/schedules", settings=ctx.settings), notice="schedule_deleted")
