"""My profile: the signed-in person's own time zone, contact methods and notification rules.

A person manages their own with any role (the API's `self_param` rule), so these actions need no
scope and only ever act on `ctx.principal.user_id`: no form field names a user. Each action calls
the service function the API's contact-methods route calls, through the route's own request
model, so the checks (E.164, duplicates, 20 methods, code cooldown, 10 steps, delays) are the same.
"""

from __future__ import annotations

from typing import Any

from chalicelib.console.visits import app_path
from chalicelib.console.web import Confirmation, ConsolePages, Ctx, Page, Redirect
from chalicelib.contact import rules, service, verification
from chalicelib.contact.models import ContactMethodCreate, NotificationRulesPut, VerificationCode
from chalicelib.contact.profile import NotificationProfile
from chalicelib.directory.models import ProfilePatch
from chalicelib.directory.users import update_user
from chalicelib.errors import ValidationFailed
from chalicelib.organization.service import organization_time_zone
from chalicelib.zones import offered_zones

console = ConsolePages(
    __name__,
    notices={
        "profile_method_added": "Contact method added.",
        "profile_method_added_unverified": "Contact method added. Send a code to verify the number: "
        "unverified numbers are never paged.",
        "profile_code_sent": "A 6-digit code is on its way. It works for 10 minutes.",
        "profile_method_verified": "Number verified. It can be paged now.",
        "profile_method_removed": "Contact method removed, with the notification rule steps that used it.",
        "profile_rules_saved": "Notification rules saved.",
        "profile_zone_saved": "Time zone saved. Times are shown in it from now on.",
    },
)

# The select's value for "no zone of my own": the person follows the organization's.
ORGANIZATION_ZONE = ""
# Every type a person may add (the chat and push types by their product's name).
TYPE_NAMES = dict(rules.DEFAULT_LABELS)
URGENCY_NAMES = {"high": "High urgency", "low": "Low urgency"}


def _me(ctx: Ctx) -> str:
    user_id = ctx.signed_in.user_id
    assert user_id is not None  # a console session always belongs to a directory user
    return user_id


def profile_page(ctx: Ctx) -> Page:
    """The page, also re-rendered by every action's error with what the person typed."""
    organization_id, user_id = ctx.organization_id, _me(ctx)
    rules_now = service.get_rules(organization_id=organization_id, user_id=user_id, now=ctx.now)
    typed: dict[str, Any] = {
        "type": ctx.value("type", "sms"),
        "address": ctx.value("address"),
        "label": ctx.value("label"),
        "urgency": ctx.value("urgency"),
        "contact_method_id": ctx.value("contact_method_id"),
        "delay_minutes": ctx.value("delay_minutes", "0"),
        "method": ctx.path.get("contact_method_id", ""),
        "time_zone": ctx.value("time_zone", ctx.user.time_zone or ORGANIZATION_ZONE if ctx.user else ""),
    }
    return Page(
        "console/self_service/profile.html",
        "My profile",
        section="profile",
        context={
            "methods": list(rules_now.methods),
            "rules": rules_now,
            "urgencies": URGENCY_NAMES,
            "type_names": TYPE_NAMES,
            "phone_types": (*rules.PHONE_TYPES, *rules.HOOK_TYPES),  # the types a code proves
            "max_delay": rules.MAX_DELAY_MINUTES,
            "typed": typed,
            "zone_choices": _zone_choices(typed["time_zone"], organization_time_zone(organization_id)),
            "now": ctx.now,
        },
    )


@console.page("/profile")
def show_profile(ctx: Ctx) -> Page:
    """My contact methods and notification rules."""
    return profile_page(ctx)


def _zone_choices(chosen: str, organization_zone: str) -> list[tuple[str, str]]:
    """The organization's zone first, then every zone; a typed value the list lacks stays shown."""
    names = list(offered_zones())
    if chosen and chosen not in names:
        names.insert(0, chosen)
    return [(ORGANIZATION_ZONE, f"The organization's zone ({organization_zone})"), *((name, name) for name in names)]


@console.action("/profile/time-zone", scope=None, on_error=profile_page)
def set_time_zone(ctx: Ctx) -> Redirect:
    """Choose my time zone, or follow the organization's again (PATCH /api/v1/users/{id}/profile)."""
    body = ctx.model(ProfilePatch, {"time_zone": ctx.value("time_zone") or None})
    update_user(organization_id=ctx.organization_id, user_id=_me(ctx), now=ctx.now, **body.changes())
    return Redirect(app_path("/profile", settings=ctx.settings), notice="profile_zone_saved")


@console.action("/profile/contact-methods", scope=None, on_error=profile_page)
def add_contact_method(ctx: Ctx) -> Redirect:
    """Add one of my contact methods (phone numbers start unverified)."""
    body = ctx.model(
        ContactMethodCreate,
        {"type": ctx.value("type"), "address": ctx.value("address"), "label": ctx.value("label") or None},
    )
    method = service.create_method(
        organization_id=ctx.organization_id,
        user_id=_me(ctx),
        method_type=body.type,
        address=body.address,
        label=body.label,
        now=ctx.now,
        settings=ctx.settings,
    )
    notice = "profile_method_added" if method.verified else "profile_method_added_unverified"
    return Redirect(app_path("/profile", settings=ctx.settings), notice=notice)


@console.action("/profile/contact-methods/{contact_method_id}/send-code", scope=None, on_error=profile_page)
def send_code(ctx: Ctx) -> Redirect:
    """Send a verification code to one of my numbers."""
    verification.send_verification(
        organization_id=ctx.organization_id,
        user_id=_me(ctx),
        contact_method_id=ctx.path["contact_method_id"],
        now=ctx.now,
        settings=ctx.settings,
    )
    return Redirect(app_path("/profile", settings=ctx.settings), notice="profile_code_sent")


@console.action("/profile/contact-methods/{contact_method_id}/verify", scope=None, on_error=profile_page)
def verify_method(ctx: Ctx) -> Redirect:
    """Verify one of my numbers with the code sent to it."""
    body = ctx.model(VerificationCode, {"code": ctx.value("code")})
    verification.verify(
        organization_id=ctx.organization_id,
        user_id=_me(ctx),
        contact_method_id=ctx.path["contact_method_id"],
        code=body.code,
        now=ctx.now,
        settings=ctx.settings,
    )
    return Redirect(app_path("/profile", settings=ctx.settings), notice="profile_method_verified")


@console.action(
    "/profile/contact-methods/{contact_method_id}/remove",
    scope=None,
    on_error=profile_page,
    confirm=Confirmation(
        "Remove this contact method?",
        "Pages stop going to it, and the notification rule steps that use it are removed too.",
        "Remove method",
    ),
)
def remove_method(ctx: Ctx) -> Redirect:
    """Remove one of my contact methods and the rule steps that name it."""
    service.delete_method(
        organization_id=ctx.organization_id,
        user_id=_me(ctx),
        contact_method_id=ctx.path["contact_method_id"],
        now=ctx.now,
    )
    return Redirect(app_path("/profile", settings=ctx.settings), notice="profile_method_removed")


def _steps(profile: NotificationProfile) -> dict[str, list[dict[str, Any]]]:
    return {
        urgency: [
            {"contact_method_id": s.contact_method.contact_method_id, "delay_minutes": s.delay_minutes}
            for s in profile.steps(urgency)
        ]
        for urgency in rules.URGENCIES
    }


def _urgency(ctx: Ctx) -> str:
    urgency = ctx.value("urgency")
    if urgency not in rules.URGENCIES:
        raise ValidationFailed.for_field("urgency", "must be high or low")
    return urgency


def _version(ctx: Ctx) -> str:
    # The version the page showed: a change made elsewhere since is a 409, never silently overwritten.
    return ctx.value("version")


def _put_rules(ctx: Ctx, steps: dict[str, list[dict[str, Any]]]) -> Redirect:
    body = ctx.model(NotificationRulesPut, {**steps, "version": _version(ctx)})
    service.put_rules(
        organization_id=ctx.organization_id,
        user_id=_me(ctx),
        high=[step.step() for step in body.high],
        low=[step.step() for step in body.low],
        now=ctx.now,
        expected_version=body.version,
    )
    return Redirect(app_path("/profile", settings=ctx.settings), notice="profile_rules_saved")


@console.action("/profile/notification-rules/add", scope=None, on_error=profile_page)
def add_rule_step(ctx: Ctx) -> Redirect:
    """Add a step to my notification rules: this method, this many minutes into a page."""
    urgency = _urgency(ctx)
    steps = _steps(service.get_rules(organization_id=ctx.organization_id, user_id=_me(ctx), now=ctx.now))
    steps[urgency].append(
        {"contact_method_id": ctx.value("contact_method_id"), "delay_minutes": ctx.value("delay_minutes")}
    )
    return _put_rules(ctx, steps)


@console.action("/profile/notification-rules/remove", scope=None, on_error=profile_page)
def remove_rule_step(ctx: Ctx) -> Redirect:
    """Remove one step from my notification rules."""
    urgency = _urgency(ctx)
    steps = _steps(service.get_rules(organization_id=ctx.organization_id, user_id=_me(ctx), now=ctx.now))
    wanted = (ctx.value("contact_method_id"), ctx.value("delay_minutes"))
    kept = [s for s in steps[urgency] if (s["contact_method_id"], str(s["delay_minutes"])) != wanted]
    if len(kept) == len(steps[urgency]):
        raise ValidationFailed("That step is no longer in your rules. Reload the page to see them as they are.")
    steps[urgency] = kept
    return _put_rules(ctx, steps)
