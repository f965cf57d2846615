"""An Opsgenie account as a configuration document. Pure: the reader's answers in, the document
and the notes out.

Opsgenie sends an alert to a team, whose routing rules pick an escalation (or a schedule);
Tocsin opens an incident on a service, whose policy pages. So a team's default routing rule
gives the policy of the team's services, and alerts that reach a team land on its service
(chalicelib.client.importers.opsgenie_intake)."""

from __future__ import annotations

import itertools
import re
from typing import Any

from chalicelib.client import document as doc
from chalicelib.client.importers import opsgenie_intake, opsgenie_schedules, paged_roles
from chalicelib.client.importers.accounts import OpsgenieAccount
from chalicelib.client.importers.context import Context, Translation, clean_name

VENDOR = "opsgenie"
ROLES = {"owner": "admin", "admin": "admin", "user": "responder", "observer": "viewer", "stakeholder": "viewer"}
METHODS = {"email": "email", "sms": "sms", "voice": "voice"}
E164 = re.compile(r"^\+[1-9]\d{7,14}$")
UNIT_MINUTES = {"days": 1440, "hours": 60, "minutes": 1, "seconds": 1 / 60, "miliseconds": 1 / 60000}
MAX_DELAY = 1440
MAX_REPEATS = 9
MAX_STEPS = 10


def minutes_of(duration: dict[str, Any] | None) -> int:
    if not duration:
        return 0
    return round(float(duration.get("timeAmount") or 0) * UNIT_MINUTES.get(str(duration.get("timeUnit")), 1))


def _address(method: str, to: str) -> str | None:
    if method == "email":
        return to.strip() or None
    number = "+" + re.sub(r"[^\d]", "", to)
    return number if E164.match(number) else None


def _user(raw: dict[str, Any], ctx: Context) -> doc.User | None:
    vendor_id, email = str(raw["id"]), str(raw.get("username") or "").strip()
    if "@" not in email:
        ctx.notes.skip("user", email or vendor_id, vendor_id, "no email address: Tocsin matches people by email")
        return None
    ctx.users[vendor_id] = email
    ctx.users[email.lower()] = email
    role_name = str((raw.get("role") or {}).get("name") or "User").lower()
    role = ctx.existing.roles.get(email.lower()) or ROLES.get(role_name)
    if role is None:
        role = "responder"
        ctx.notes.approximate("user", email, vendor_id, f"custom role {role_name!r}", "the responder role")
    methods: list[doc.ContactMethod] = []
    known: set[tuple[str, str]] = {("email", email.lower())}
    for contact in raw.get("contacts") or []:
        method, to = str(contact.get("method")), str(contact.get("to") or "")
        kind = METHODS.get(method)
        address = _address(method, to) if kind else None
        if kind is None or address is None:
            why = "push to the Opsgenie app" if method == "mobile" else f"{method} {to!r} is not a valid address"
            ctx.notes.skip("contact_method", f"{email} {method}", str(contact.get("id")), why, "an SMS method")
            continue
        key = (kind, address.lower() if kind == "email" else address)
        if key not in known:
            known.add(key)
            methods.append(doc.ContactMethod(type=kind, address=address))
    if raw.get("blocked"):
        ctx.notes.approximate("user", email, vendor_id, "blocked at Opsgenie: imported deactivated")
    return doc.User(
        email=email,
        name=clean_name(raw.get("fullName"), email),
        role=role,
        active=not raw.get("blocked"),
        contact_methods=methods[:19],
        notification_rules=_rules(raw, email, known, ctx),
        source=ctx.source(vendor_id),
    )


def _rules(raw: dict[str, Any], email: str, known: set[tuple[str, str]], ctx: Context) -> doc.NotificationRules | None:
    """The first enabled new-alert rule's steps, for high and low urgency alike (Opsgenie has no
    urgency); other rules are listed as not carried over."""
    chosen: list[doc.RuleStep] | None = None
    for rule in sorted(raw.get("notificationRules") or [], key=lambda r: int(r.get("order") or 0)):
        label = f"{email} {rule.get('name') or rule.get('actionType')}"
        if rule.get("actionType") != "create-alert" or not rule.get("enabled", True):
            if rule.get("actionType") not in ("create-alert", None):
                ctx.notes.skip("notification_rule", label, str(rule.get("id")), f"{rule.get('actionType')} notices")
            continue
        if chosen is not None:
            ctx.notes.skip("notification_rule", label, str(rule.get("id")), "Tocsin keeps one rule per urgency")
            continue
        criteria = (rule.get("criteria") or {}).get("type", "match-all")
        if criteria != "match-all" or rule.get("timeRestriction"):
            ctx.notes.approximate(
                "notification_rule",
                label,
                str(rule.get("id")),
                "its conditions or hours: Tocsin's applies to every page",
            )
        chosen = []
        for step in rule.get("steps") or []:
            contact = step.get("contact") or {}
            kind = METHODS.get(str(contact.get("method")))
            address = _address(str(contact.get("method")), str(contact.get("to") or "")) if kind else None
            if not step.get("enabled", True) or kind is None or address is None:
                continue
            if (kind, address.lower() if kind == "email" else address) not in known:
                continue
            delay = min(MAX_DELAY, max(0, minutes_of(step.get("sendAfter"))))
            made = doc.RuleStep(type=kind, address=address, delay_minutes=delay)
            if made not in chosen and len(chosen) < MAX_STEPS:
                chosen.append(made)
    if not chosen:
        return None
    return doc.NotificationRules(high=chosen, low=list(chosen))


def _team(raw: dict[str, Any], ctx: Context) -> doc.Team:
    vendor_id = str(raw["id"])
    name = ctx.name("team", raw.get("name"), vendor_id)
    ctx.teams[vendor_id] = name
    members = []
    for member in raw.get("members") or []:
        user = member.get("user") or {}
        email = ctx.users.get(str(user.get("id"))) or ctx.users.get(str(user.get("username")).lower())
        if email is not None and email not in members:
            members.append(email)
    return doc.Team(
        name=name,
        description=clean_name(raw.get("description"), "") or None,
        members=ctx.existing.members(name, members),
        source=ctx.source(vendor_id),
    )


def _target(recipient: dict[str, Any], ctx: Context) -> doc.Target | None:
    kind, vendor_id = str(recipient.get("type")), str(recipient.get("id"))
    if kind == "user":
        email = ctx.users.get(vendor_id) or ctx.users.get(str(recipient.get("username")).lower())
        return doc.Target(user=email) if email else None
    if kind == "schedule" and vendor_id in ctx.schedules:
        return doc.Target(schedule=ctx.schedules[vendor_id])
    return None


def _policy(raw: dict[str, Any], ctx: Context) -> doc.EscalationPolicy | None:
    """Opsgenie's delays count from the alert's creation; Tocsin's from the level before."""
    vendor_id, label = str(raw["id"]), str(raw.get("name") or raw["id"])
    differences: list[str] = []
    groups: dict[int, list[doc.Target]] = {}
    for rule in raw.get("rules") or []:
        delay = minutes_of(rule.get("delay"))
        recipient = rule.get("recipient") or {}
        target = _target(recipient, ctx)
        who = recipient.get("name") or recipient.get("username") or recipient.get("type")
        if target is None:
            differences.append(f"{who} after {delay} min: a {recipient.get('type')} target was not carried over")
            continue
        if rule.get("condition") == "if-not-closed":
            differences.append(f"{who}: 'if not closed' escalates on after an acknowledgement; Tocsin stops")
        if rule.get("notifyType") not in (None, "default"):
            differences.append(f"{who}: notify {rule.get('notifyType')}: Tocsin notifies whoever is on call")
        level = groups.setdefault(delay, [])
        if target not in level:
            level.append(target)
    times = sorted(groups)
    if not times:
        ctx.notes.skip("escalation_policy", label, vendor_id, "no rule has a target Tocsin knows")
        return None
    if times[0] > 0:
        differences.append(f"the first rule waits {times[0]} min; Tocsin pages level 1 at once")
    repeat = raw.get("repeat") or {}
    repeats = int(repeat.get("count") or 0)
    if repeats > MAX_REPEATS:
        differences.append(f"repeats {repeats} times; Tocsin at most {MAX_REPEATS}")
    wait = int(repeat.get("waitInterval") or 0) or 5
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)] + [wait]
    levels = [
        doc.Level(delay_minutes=min(MAX_DELAY, max(1, gap)), targets=groups[at][:20])
        for at, gap in zip(times, gaps, strict=True)
    ]
    if differences:
        ctx.notes.approximate("escalation_policy", label, vendor_id, "; ".join(differences))
    name = ctx.name("escalation_policy", label, vendor_id)
    ctx.policies[vendor_id] = name
    return doc.EscalationPolicy(
        name=name, repeat_count=min(MAX_REPEATS, repeats), levels=levels, source=ctx.source(vendor_id)
    )


def translate(account: OpsgenieAccount, ctx: Context) -> Translation:
    translation = Translation(doc.Document(version=1), ctx.notes)
    for section, why in account.unavailable.items():
        ctx.notes.skip(section.rstrip("s"), section, "-", f"could not be read: {why}")
    users = [user for raw in account.users if (user := _user(raw, ctx)) is not None]
    teams = [_team(raw, ctx) for raw in account.teams]
    users += ctx.existing.kept_members(users, teams)
    schedules = [s for raw in account.schedules if (s := opsgenie_schedules.schedule_of(raw, ctx)) is not None]
    policies = [p for raw in account.escalations if (p := _policy(raw, ctx)) is not None]
    intake = opsgenie_intake.Intake(account, ctx, translation)
    policies += intake.routing_policies()
    services = intake.services()
    integrations = intake.integrations()
    heartbeats = intake.heartbeats()
    windows = intake.maintenance_windows()
    users = paged_roles.responders_where_paged(users, policies, ctx.notes)
    translation.document = doc.Document(
        version=1,
        users=users,
        teams=teams,
        schedules=schedules,
        escalation_policies=policies,
        services=services + intake.team_services,
        integrations=integrations,
        maintenance_windows=windows,
        heartbeats=heartbeats,
    )
    return translation
