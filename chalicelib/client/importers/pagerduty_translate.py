"""A PagerDuty account as a configuration document. Pure: the reader's answers in, the document
and the notes out (what could not be carried over exactly, object by object)."""

from __future__ import annotations

import re
from typing import Any

from chalicelib.client import document as doc
from chalicelib.client.importers import integrations, paged_roles, pagerduty_schedules, pagerduty_services, phase
from chalicelib.client.importers.accounts import PagerDutyAccount
from chalicelib.client.importers.context import Context, Intake, Translation, clean_name
from chalicelib.client.importers.timezones import iana

VENDOR = "pagerduty"
ROLES = {
    "owner": "admin",  # the Tocsin organization keeps its own owner
    "admin": "admin",
    "user": "responder",
    "limited_user": "responder",
    "manager": "responder",
    "observer": "viewer",
    "restricted_access": "viewer",
    "read_only_user": "viewer",
    "read_only_limited_user": "viewer",
}
METHOD_TYPES = {
    "email_contact_method": "email",
    "email_contact_method_reference": "email",
    "sms_contact_method": "sms",
    "sms_contact_method_reference": "sms",
    "phone_contact_method": "voice",
    "phone_contact_method_reference": "voice",
}
E164 = re.compile(r"^\+[1-9]\d{7,14}$")
MAX_METHODS = 19  # besides the account email
MAX_STEPS = 10
MAX_DELAY = 1440
MAX_REPEATS = 9
MAX_TARGETS = 20


def _address(method: dict[str, Any], kind: str) -> str | None:
    address = str(method.get("address") or "").strip()
    if kind == "email":
        return address or None
    digits = re.sub(r"[^\d]", "", address)
    code = str(method.get("country_code") or "").strip()
    number = f"+{code}{digits}" if code and not address.startswith("+") else f"+{digits}"
    return number if E164.match(number) else None


def _user(raw: dict[str, Any], ctx: Context) -> doc.User | None:
    vendor_id, email = str(raw["id"]), str(raw.get("email") or "").strip()
    label = str(raw.get("name") or email or vendor_id)
    if "@" not in email:
        ctx.notes.skip("user", label, vendor_id, "no email address: Tocsin matches and invites people by email")
        return None
    ctx.users[vendor_id] = email
    role = ctx.existing.roles.get(email.lower()) or ROLES.get(str(raw.get("role")), "responder")
    if raw.get("role") == "owner" and email.lower() not in ctx.existing.roles:
        ctx.notes.approximate(
            "user", email, vendor_id, "PagerDuty's account owner", "admin (the organization has its owner)"
        )
    methods: dict[str, tuple[str, str]] = {}  # vendor method id -> (type, address)
    contact_methods: list[doc.ContactMethod] = []
    for method in raw.get("contact_methods") or []:
        kind = METHOD_TYPES.get(str(method.get("type")))
        if kind is None:
            ctx.notes.skip(
                "contact_method",
                f"{email} {method.get('label') or method.get('type')}",
                str(method.get("id")),
                f"{method.get('type')}: Tocsin pages by email, Slack, SMS and voice call",
                "an SMS method",
            )
            continue
        address = _address(method, kind)
        if address is None:
            ctx.notes.skip(
                "contact_method", f"{email} {method.get('label')}", str(method.get("id")), "not a valid address"
            )
            continue
        methods[str(method.get("id"))] = (kind, address)
        if (kind, address.lower()) == ("email", email.lower()):
            continue  # the account email is every user's method
        if any((m.type, m.address) == (kind, address) for m in contact_methods):
            continue
        if len(contact_methods) >= MAX_METHODS:
            ctx.notes.skip("contact_method", f"{email} {address}", str(method.get("id")), "more than 20 methods")
            continue
        label_text = clean_name(method.get("label"), "")[:100] or None
        contact_methods.append(doc.ContactMethod(type=kind, address=address, label=label_text))
    return doc.User(
        email=email,
        name=clean_name(raw.get("name"), email),
        role=role,
        contact_methods=contact_methods,
        notification_rules=_rules(raw, email, methods, ctx),
        source=ctx.source(vendor_id),
    )


def _rules(
    raw: dict[str, Any], email: str, methods: dict[str, tuple[str, str]], ctx: Context
) -> doc.NotificationRules | None:
    rules = raw.get("notification_rules") or []
    if not rules:
        return None
    steps: dict[str, list[doc.RuleStep]] = {"high": [], "low": []}
    for rule in rules:
        urgency = str(rule.get("urgency") or "high")
        method = methods.get(str((rule.get("contact_method") or {}).get("id")))
        if urgency not in steps or method is None:
            ctx.notes.skip("notification_rule", email, str(rule.get("id")), "its contact method was not carried over")
            continue
        delay = min(MAX_DELAY, max(0, int(rule.get("start_delay_in_minutes") or 0)))
        step = doc.RuleStep(type=method[0], address=method[1], delay_minutes=delay)
        if step not in steps[urgency] and len(steps[urgency]) < MAX_STEPS:
            steps[urgency].append(step)
    return doc.NotificationRules(**steps)


def _team(raw: dict[str, Any], ctx: Context) -> doc.Team:
    vendor_id = str(raw["id"])
    name = ctx.name("team", raw.get("name"), vendor_id)
    ctx.teams[vendor_id] = name
    members: list[str] = []
    managers = 0
    for member in raw.get("members") or []:
        email = ctx.users.get(str((member.get("user") or {}).get("id")))
        if email is not None and email not in members:
            members.append(email)
        managers += member.get("role") == "manager"
    if managers:
        ctx.notes.approximate("team", name, vendor_id, "team roles (manager) are not carried over", "the admin role")
    return doc.Team(
        name=name,
        description=clean_name(raw.get("description"), "") or None,
        members=ctx.existing.members(name, members),
        source=ctx.source(vendor_id),
    )


def _policy(raw: dict[str, Any], ctx: Context) -> doc.EscalationPolicy | None:
    vendor_id, label = str(raw["id"]), str(raw.get("name") or raw["id"])
    levels: list[doc.Level] = []
    differences: list[str] = []
    for number, rule in enumerate(raw.get("escalation_rules") or [], start=1):
        targets: list[doc.Target] = []
        for target in rule.get("targets") or []:
            kind, target_id = str(target.get("type")), str(target.get("id"))
            if kind.startswith("user"):
                email = ctx.users.get(target_id)
                if email is not None:
                    targets.append(doc.Target(user=email))
                    continue
            elif kind.startswith("schedule") and target_id in ctx.schedules:
                targets.append(doc.Target(schedule=ctx.schedules[target_id]))
                continue
            differences.append(f"level {number}: target {target.get('summary') or target_id} was not carried over")
        if rule.get("escalation_rule_assignment_strategy") in ("round_robin", {"type": "round_robin"}):
            differences.append(f"level {number}: round robin: Tocsin notifies every target of a level")
        if not targets:
            differences.append(f"level {number} has no target left and is left out")
            continue
        delay = int(rule.get("escalation_delay_in_minutes") or 30)
        if not 1 <= delay <= MAX_DELAY:
            differences.append(f"level {number}: a delay of {delay} minutes is outside 1 to {MAX_DELAY}")
        levels.append(doc.Level(delay_minutes=min(MAX_DELAY, max(1, delay)), targets=targets[:MAX_TARGETS]))
    loops = int(raw.get("num_loops") or 0)
    if loops > MAX_REPEATS:
        differences.append(f"repeats {loops} times: Tocsin repeats at most {MAX_REPEATS} times")
    if not levels:
        ctx.notes.skip("escalation_policy", label, vendor_id, "no level has a target Tocsin knows")
        return None
    if differences:
        ctx.notes.approximate("escalation_policy", label, vendor_id, "; ".join(differences))
    name = ctx.name("escalation_policy", label, vendor_id)
    ctx.policies[vendor_id] = name
    return doc.EscalationPolicy(
        name=name, repeat_count=min(MAX_REPEATS, loops), levels=levels, source=ctx.source(vendor_id)
    )


def _service(raw: dict[str, Any], ctx: Context, policy_teams: dict[str, str]) -> doc.Service:
    vendor_id, label = str(raw["id"]), str(raw.get("name") or raw["id"])
    name = ctx.name("service", label, vendor_id)
    ctx.services[vendor_id] = name
    policy_id = str((raw.get("escalation_policy") or {}).get("id"))
    policy = ctx.policies.get(policy_id)
    if raw.get("escalation_policy") and policy is None:
        ctx.notes.approximate("service", name, vendor_id, "its escalation policy was not carried over: nobody is paged")
    teams = [ctx.teams[str(t.get("id"))] for t in raw.get("teams") or [] if str(t.get("id")) in ctx.teams]
    team = teams[0] if teams else policy_teams.get(policy_id)
    rule = pagerduty_services.pagerduty_urgency(raw, name, vendor_id, ctx)
    grouping = pagerduty_services.pagerduty_grouping(raw, name, vendor_id, ctx)
    for field, what in (
        ("auto_resolve_timeout", "auto-resolve"),
        ("acknowledgement_timeout", "acknowledgement timeout"),
    ):
        if raw.get(field):
            ctx.notes.approximate("service", name, vendor_id, f"{what} after {raw[field]} s is not carried over")
    return doc.Service(
        name=name,
        description=clean_name(raw.get("description"), "") or None,
        team=team,
        escalation_policy=policy,
        urgency_rule=rule,
        alert_grouping=grouping,
        active=raw.get("status") != "disabled",
        source=ctx.source(vendor_id),
    )


def _integrations(raw: dict[str, Any], ctx: Context, translation: Translation) -> list[doc.Integration]:
    service = ctx.services[str(raw["id"])]
    found: list[doc.Integration] = []
    for item in raw.get("integrations") or []:
        vendor_id = str(item["id"])
        vendor_name = str((item.get("vendor") or {}).get("summary") or (item.get("vendor") or {}).get("name") or "")
        kind = str(item.get("type") or "")
        label = f"{service}: {item.get('name') or item.get('summary') or vendor_name or kind}"
        mapped = integrations.pagerduty(kind, vendor_name)
        if mapped.type is None:
            ctx.notes.skip("integration", label, vendor_id, mapped.reason, mapped.nearest)
            continue
        if mapped.reason:
            ctx.notes.approximate("integration", label, vendor_id, mapped.reason, mapped.nearest)
        name = ctx.name("integration", label, vendor_id)
        found.append(doc.Integration(name=name, type=mapped.type, service=service, source=ctx.source(vendor_id)))
        translation.intakes.append(
            Intake(vendor_id, label, vendor_name or kind, name, mapped.type, mapped.keeps_payload, service)
        )
    return found


def _window(raw: dict[str, Any], ctx: Context) -> doc.MaintenanceWindow | None:
    vendor_id = str(raw["id"])
    start, end = pagerduty_schedules.when(raw.get("start_time")), pagerduty_schedules.when(raw.get("end_time"))
    services = [ctx.services[str(s.get("id"))] for s in raw.get("services") or [] if str(s.get("id")) in ctx.services]
    label = clean_name(raw.get("description"), f"maintenance {vendor_id}")
    if start is None or end is None or end <= ctx.now:
        return None
    if not services:
        ctx.notes.skip("maintenance_window", label, vendor_id, "none of its services was carried over")
        return None
    return doc.MaintenanceWindow(
        description=ctx.name("maintenance_window", label, vendor_id),
        services=services,
        start=start,
        end=end,
        source=ctx.source(vendor_id),
    )


def _elapsed(raw: dict[str, Any]) -> frozenset[str]:
    zone = iana(raw.get("time_zone"))
    return phase.elapsed_layers(raw, zone) if zone else frozenset()


def translate(account: PagerDutyAccount, ctx: Context) -> Translation:
    translation = Translation(doc.Document(version=1), ctx.notes)
    for section, why in account.unavailable.items():
        ctx.notes.skip(section.rstrip("s"), section, "-", f"could not be read: {why}")
    users = [user for raw in account.users if (user := _user(raw, ctx)) is not None]
    teams = [_team(raw, ctx) for raw in account.teams]
    users += ctx.existing.kept_members(users, teams)
    schedules = [
        s for raw in account.schedules if (s := pagerduty_schedules.schedule_of(raw, ctx, _elapsed(raw))) is not None
    ]
    policies = [p for raw in account.escalation_policies if (p := _policy(raw, ctx)) is not None]
    policy_teams = {
        str(raw["id"]): ctx.teams[str(raw["teams"][0]["id"])]
        for raw in account.escalation_policies
        if raw.get("teams") and str(raw["teams"][0].get("id")) in ctx.teams
    }
    services = [_service(raw, ctx, policy_teams) for raw in account.services]
    intakes = [item for raw in account.services for item in _integrations(raw, ctx, translation)]
    windows = [w for raw in account.maintenance_windows if (w := _window(raw, ctx)) is not None]
    users = paged_roles.responders_where_paged(users, policies, ctx.notes)
    translation.document = doc.Document(
        version=1,
        users=users,
        teams=teams,
        schedules=schedules,
        escalation_policies=policies,
        services=services,
        integrations=intakes,
        maintenance_windows=windows,
    )
    return translation
