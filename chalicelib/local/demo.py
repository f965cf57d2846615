"""Demo data that makes the first minute of `make run` useful. Seeding twice changes nothing.

Identifiers and keys are derived from fixed labels, so every run shows the same keys
and the curl lines of README.md and docs/ keep working.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from chalicelib.apikey import keys
from chalicelib.apikey import service as apikeys
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.local.demo_noise import seed_noise_control
from chalicelib.local.demo_reach import seed_contact_methods
from chalicelib.local.demo_status import seed_status_page
from chalicelib.organization.service import create_organization, find_organization
from chalicelib.settings import get_settings
from chalicelib.store import ConditionFailed, conditional

DEMO_NAMESPACE = uuid.UUID("8d7d0c3e-2f0a-4a43-9c0e-7a6f5d3b1c11")
ORGANIZATION_NAME = "Demo Org"


@dataclass(frozen=True)
class DemoUser:
    name: str
    email: str
    slack_user_id: str | None
    role: str


DEMO_USERS = (
    DemoUser("Ada Lovelace", "ada@demo.tocsin.dev", "U0ADA00001", "owner"),
    DemoUser("Grace Hopper", "grace@demo.tocsin.dev", "U0GRACE002", "responder"),
    DemoUser("Linus Email-Only", "linus@demo.tocsin.dev", None, "responder"),
    DemoUser("Vera Viewer", "vera@demo.tocsin.dev", None, "viewer"),
)
DEMO_TEAM = ("Payments", "Owns checkout, billing and the payment gateway.")
DEMO_SERVICES = (
    ("Checkout API", "Customer-facing checkout and cart.", "SEV2"),
    ("Billing Worker", "Invoices and renewals.", None),
)


def demo_id(label: str) -> str:
    return str(uuid.uuid5(DEMO_NAMESPACE, label))


def seed(now: datetime) -> dict[str, Any]:
    """Create what is missing and return the facts demo.json records."""
    from chalicelib.catalog import service as services
    from chalicelib.directory import teams, users

    settings = get_settings()
    organization_id = demo_id("organization")
    if find_organization(organization_id=organization_id) is None:
        create_organization(name=ORGANIZATION_NAME, now=now, organization_id=organization_id)

    seeded_users = []
    for person in DEMO_USERS:
        user = users.find_user_by_email(organization_id=organization_id, email=person.email)
        if user is None:
            user = users.create_user(
                organization_id=organization_id,
                name=person.name,
                email=person.email,
                slack_user_id=person.slack_user_id,
                role=person.role,
                now=now,
            )
        seeded_users.append(user)

    team = teams.find_team_by_name(organization_id=organization_id, name=DEMO_TEAM[0])
    if team is None:
        team = teams.create_team(
            organization_id=organization_id,
            name=DEMO_TEAM[0],
            description=DEMO_TEAM[1],
            member_ids=[u.user_id for u in seeded_users],
            now=now,
        )

    existing = {s.name: s for s in services.list_services(organization_id=organization_id)}
    seeded_services = []
    for name, description, default_severity in DEMO_SERVICES:
        service = existing.get(name) or services.create_service(
            organization_id=organization_id,
            name=name,
            description=description,
            team_id=team.team_id,
            default_severity=default_severity,
            now=now,
        )
        seeded_services.append(service)

    owner_key = keys.derive_key(settings.api_key_hmac_secret, "demo-owner")
    readonly_key = keys.derive_key(settings.api_key_hmac_secret, "demo-readonly")
    _ensure_key(organization_id, "Demo owner (every scope)", list(ALL_SCOPES), owner_key, now)
    _ensure_key(organization_id, "Demo read-only", ["incidents:read"], readonly_key, now)

    integrations = _seed_integrations(organization_id, seeded_services[0].service_key, now)
    on_call = _seed_on_call(organization_id, team.team_id, seeded_users, seeded_services[0].service_key, now)
    status_page = seed_status_page(organization_id=organization_id, now=now)
    webhook_subscription = _seed_webhook_subscription(organization_id, seeded_users[0].email, now)
    reach = seed_contact_methods(organization_id, seeded_users, now)
    console = _seed_console_users(organization_id)
    noise_control = seed_noise_control(
        organization_id, seeded_services[1], _integration_id(integrations["alertmanager"]["routing_key"]), now
    )

    return {
        "organization_id": organization_id,
        "organization_name": ORGANIZATION_NAME,
        "api_keys": {"owner": owner_key, "readonly": readonly_key},
        "services": [
            {"name": s.name, "service_key": s.service_key, "service_id": s.service_id} for s in seeded_services
        ],
        "users": [
            {
                "id": u.user_id,
                "name": u.name,
                "email": u.email,
                "slack_user_id": u.slack_user_id,
                **reach[u.user_id],
            }
            for u in seeded_users
        ],
        "team": {"id": team.team_id, "name": team.name},
        "integrations": integrations,
        "on_call": on_call,
        "status_page": status_page,
        "webhook_subscription": webhook_subscription,
        "console": console,
        "noise_control": noise_control,
        # To "click" a Slack page's button with curl (docs/PAGE_ACTIONS.md): the secret the signature is checked with.
        "slack": {
            "signing_secret": get_settings().slack_signing_key(),
            "interactivity_url": f"{get_settings().public_base_url.rstrip('/')}/integrations/slack/interactivity",
            # The workspace a click must name (`team.id`), when it names one.
            "team_id": ",".join(sorted(get_settings().slack_teams())) or None,
        },
    }


def console_password(person: DemoUser) -> str:
    """The demo sign-in password of a demo user (fixed, so the README's lines keep working)."""
    return f"{person.email.split('@')[0]}-tocsin-demo"


def _seed_console_users(organization_id: str) -> dict[str, Any]:
    """Every demo user can sign in to the console (Cognito on the emulator) with a fixed password."""
    from chalicelib.identity import pool as identity_pool

    settings = get_settings()
    users = []
    for person in DEMO_USERS:
        if settings.cognito_user_pool_id:
            identity_pool.create_user(
                email=person.email,
                organization_id=organization_id,
                name=person.name,
                password=console_password(person),
                settings=get_settings(),
            )
        users.append(
            {"email": person.email, "password": console_password(person), "role": person.role, "name": person.name}
        )
    return {"url": settings.app_url(), "users": users}


# name -> (integration type, options)
DEMO_INTEGRATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "custom": ("custom", {}),
    "custom_signed": ("custom", {"signing": True}),
    "custom_ip_locked": ("custom", {"ip_allowlist": ["203.0.113.0/24"]}),
    "newrelic": ("newrelic", {}),
    "sentry": ("sentry", {"client_secret": "demo-sentry-client-secret"}),
    "alertmanager": ("alertmanager", {}),
    "cloudwatch": ("cloudwatch", {}),
    "pagerduty": ("pagerduty", {}),
    "opsgenie": ("opsgenie", {}),
    "revoked": ("custom", {"revoke": True}),
}


def _seed_integrations(organization_id: str, default_service_key: str, now: datetime) -> dict[str, Any]:
    from chalicelib.integration import admin
    from chalicelib.integration.routing_keys import derive_routing_key

    secret = get_settings().api_key_hmac_secret
    seeded: dict[str, Any] = {}
    for label, (integration_type, options) in DEMO_INTEGRATIONS.items():
        routing_key = derive_routing_key(secret, f"demo-{label}")
        signing_secret = (
            "whsec_demo_" + derive_routing_key(secret, f"demo-{label}-signing") if options.get("signing") else None
        )
        record = admin.find_by_routing_key(routing_key, settings=get_settings())
        if record is None:
            issued = admin.create_integration(
                organization_id=organization_id,
                integration_type=integration_type,
                name=f"Demo {label.replace('_', ' ')}",
                now=now,
                default_service_key=default_service_key,
                signing=bool(options.get("signing")),
                client_secret=options.get("client_secret"),
                ip_allowlist=options.get("ip_allowlist"),
                routing_key=routing_key,
                signing_secret=signing_secret,
                settings=get_settings(),
            )
            if options.get("revoke"):
                admin.revoke_integration(
                    organization_id=organization_id, integration_id=issued.integration.integration_id, now=now
                )
        entry: dict[str, Any] = {
            "routing_key": routing_key,
            "url": admin.webhook_url(routing_key, settings=get_settings()),
        }
        if signing_secret:
            entry["signing_secret"] = signing_secret
        if options.get("client_secret"):
            entry["client_secret"] = options["client_secret"]
        seeded[label] = entry
    return seeded


def _integration_id(routing_key: str) -> str | None:
    from chalicelib.integration import admin

    record = admin.find_by_routing_key(routing_key, settings=get_settings())
    return record.integration_id if record is not None else None


SCHEDULE_NAME = "Payments primary"
POLICY_NAME = "Payments escalation"


def _seed_on_call(
    organization_id: str, team_id: str, people: list[Any], service_key: str, now: datetime
) -> dict[str, Any]:
    """A two-layer schedule with someone on call now, and a two-level policy on the first service.

    Level 1 is the schedule, level 2 Grace directly, 1 minute apart: an unacknowledged demo
    incident visibly escalates within a minute.
    """
    from datetime import timedelta

    from chalicelib.catalog.service import update_service
    from chalicelib.escalation import service as policies
    from chalicelib.escalation.steps import Level, Target
    from chalicelib.oncall import Layer, Restriction
    from chalicelib.oncall import service as schedules

    existing = {s.schedule.name: s for s in schedules.list_schedules(organization_id=organization_id)}
    schedule = existing.get(SCHEDULE_NAME)
    if schedule is None:
        start = (now - timedelta(days=1)).replace(hour=9, minute=0, second=0, microsecond=0)
        weekly = Layer(
            layer_id="lyr_demo_weekly",
            name="Weekly rotation",
            members=(people[0].user_id, people[2].user_id),
            rotation="weekly",
            handoff_time="09:00",
            start=start,
        )
        business_hours = Layer(
            layer_id="lyr_demo_daytime",
            name="Weekday daytime",
            members=(people[1].user_id,),
            rotation="daily",
            handoff_time="09:00",
            start=start,
            restrictions=(Restriction.weekly(0, "09:00", 4, "17:00"),),
        )
        schedule = schedules.create_schedule(
            organization_id=organization_id,
            name=SCHEDULE_NAME,
            time_zone="UTC",
            layers=[weekly, business_hours],
            team_id=team_id,
            now=now,
        )
    existing_policies = {p.policy.name: p for p in policies.list_policies(organization_id=organization_id)}
    policy = existing_policies.get(POLICY_NAME)
    if policy is None:
        policy = policies.create_policy(
            organization_id=organization_id,
            name=POLICY_NAME,
            levels=[
                Level((Target("schedule", schedule.schedule.schedule_id),), 1),
                Level((Target("user", people[1].user_id),), 1),
            ],
            repeat_count=1,
            now=now,
        )
        update_service(
            organization_id=organization_id,
            service_ref=service_key,
            escalation_policy_id=policy.policy.policy_id,
            now=now,
        )
    return {"schedule_id": schedule.schedule.schedule_id, "escalation_policy_id": policy.policy.policy_id}


WEBHOOK_SUBSCRIPTION_DESCRIPTION = "Demo receiver"
WEBHOOK_SINK_NAME = "demo"


def _seed_webhook_subscription(organization_id: str, owner_email: str | None, now: datetime) -> dict[str, Any]:
    """Every event of the demo organization, delivered signed to the local webhook sink.

    The sink is served by this same stack, so `GET /local/outbox?channel=webhook` shows each
    delivery and whether its signature verified. The secret is random (shown once by the API);
    demo.json keeps it for people and tests that verify signatures themselves.
    """
    from chalicelib.local.webhook_sink import SINK_PATH_PREFIX
    from chalicelib.outbound import subscriptions
    from chalicelib.outbound.tables import WebhookSubscriptionRecord

    url = f"{get_settings().public_base_url.rstrip('/')}{SINK_PATH_PREFIX}{WEBHOOK_SINK_NAME}"
    existing = next(
        (
            record
            for record in WebhookSubscriptionRecord.query(organization_id)
            if record.description == WEBHOOK_SUBSCRIPTION_DESCRIPTION
        ),
        None,
    )
    if existing is None:
        created = subscriptions.create_subscription(
            organization_id=organization_id,
            url=url,
            event_types=["*"],
            description=WEBHOOK_SUBSCRIPTION_DESCRIPTION,
            owner_email=owner_email,
            now=now,
            settings=get_settings(),
        )
        record, secret = created.record, created.secret
    else:
        record, secret = existing, subscriptions.get_secret(existing, settings=get_settings())
        if record.url != url:  # the same emulator, served on another port this time
            record.url = url
            record.updated_at = now
            record.save()  # conditional on the version attribute
    return {
        "subscription_id": record.subscription_id,
        "description": WEBHOOK_SUBSCRIPTION_DESCRIPTION,
        "url": url,
        "secret": secret,
        "sink_name": WEBHOOK_SINK_NAME,
    }


def _ensure_key(organization_id: str, name: str, scopes: list[str], key: str, now: datetime) -> None:
    # A failed condition means it is already seeded: the key's hash is the item's key.
    with contextlib.suppress(ConditionFailed), conditional():
        apikeys.create_api_key(
            organization_id=organization_id,
            name=name,
            kind="service_account",
            scopes=scopes,
            now=now,
            plaintext_key=key,
            settings=get_settings(),
        )


def write_demo_file(path: Path, facts: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(facts, indent=2) + "\n")
    temporary.replace(path)
