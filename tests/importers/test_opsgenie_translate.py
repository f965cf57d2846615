"""Opsgenie's objects as the configuration document, and every reason an object is not carried
over or only approximately: users, escalations (delays from the alert's creation become delays
between levels), team routing (what pages for a team's alerts), services, integrations (the
drop-in when the server has it), heartbeats (paused until cut-over), maintenance."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chalicelib.client import document as doc
from chalicelib.client.importers import opsgenie_translate
from chalicelib.client.importers.accounts import OpsgenieAccount
from chalicelib.client.importers.context import Context, Existing, Translation
from tests.importers import harness

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
WITH_DROP_IN = frozenset({"custom", "alertmanager", "cloudwatch", "newrelic", "sentry", "pagerduty", "opsgenie"})


def translate(account: OpsgenieAccount, existing: Existing | None = None) -> Translation:
    return opsgenie_translate.translate(account, Context("opsgenie", NOW, existing or Existing()))


def notes(translation: Translation, kind: str) -> list[tuple[str, str, str]]:
    return [(n.outcome, n.name, n.reason) for n in translation.notes.items if n.kind == kind]


def person(uid: str, email: str, role: str = "User", **extra: Any) -> dict[str, Any]:
    return {"id": uid, "username": email, "fullName": f"Person {uid}", "role": {"name": role}, **extra}


def team(tid: str, name: str, rules: list[dict[str, Any]] | None, members: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"id": tid, "name": name, "members": [{"user": {"id": m}} for m in members], "routingRules": rules}


def default_rule(kind: str, target: str) -> list[dict[str, Any]]:
    return [{"id": "r", "isDefault": True, "notify": {"type": kind, "id": target}}]


def test_the_whole_account_translates_and_validates() -> None:
    account, _ = harness.opsgenie_read(NOW)
    translation = translate(account)
    document = doc.Document.model_validate(translation.document.model_dump(mode="json", by_alias=True))
    counts = {section: len(document.section(section) or []) for section, _ in doc.SECTIONS}
    assert counts == {
        "users": 40,
        "teams": 8,
        "schedules": 10,
        "escalation_policies": 13,
        "services": 38,
        "integrations": 36,
        "event_rules": 0,
        "maintenance_windows": 1,
        "heartbeats": 3,
        "status_pages": 0,
    }
    assert {beat.enabled for beat in document.heartbeats or []} == {False}


def test_users_contacts_and_the_new_alert_rule() -> None:
    contacts = [
        {"id": "c1", "method": "email", "to": "ann@home.test"},
        {"id": "c2", "method": "sms", "to": "44-7700900123"},
        {"id": "c3", "method": "voice", "to": "1-5550100001"},
        {"id": "c4", "method": "mobile", "to": "Pixel"},
        {"id": "c5", "method": "sms", "to": "1-12"},
    ]
    rules = [
        {"id": "r0", "name": "Started", "actionType": "schedule-start", "order": 0, "enabled": True},
        {
            "id": "r1",
            "name": "New",
            "actionType": "create-alert",
            "order": 1,
            "enabled": True,
            "criteria": {"type": "match-any-condition", "conditions": []},
            "steps": [
                {"contact": {"method": "email", "to": "ann@x.test"}, "sendAfter": {"timeAmount": 0}, "enabled": True},
                {
                    "contact": {"method": "sms", "to": "44-7700900123"},
                    "sendAfter": {"timeAmount": 1, "timeUnit": "hours"},
                    "enabled": True,
                },
                {"contact": {"method": "mobile", "to": "Pixel"}, "sendAfter": {"timeAmount": 0}, "enabled": True},
            ],
        },
        {"id": "r2", "name": "Second", "actionType": "create-alert", "order": 2, "enabled": True, "steps": []},
    ]
    account = OpsgenieAccount(
        users=[
            person("u1", "ann@x.test", "Owner", contacts=contacts, notificationRules=rules),
            person("u2", "bob@x.test", "NOC lead", blocked=True),
            person("u3", "not-an-email"),
        ]
    )
    translation = translate(account, Existing(roles={"bob@x.test": "admin"}))
    ann, bob = translation.document.users or []
    assert (ann.role, bob.role, bob.active) == ("admin", "admin", False)
    assert [(m.type, m.address) for m in ann.contact_methods or []] == [
        ("email", "ann@home.test"),
        ("sms", "+447700900123"),
        ("voice", "+15550100001"),
    ]
    steps = [
        doc.RuleStep(type="email", address="ann@x.test", delay_minutes=0),
        doc.RuleStep(type="sms", address="+447700900123", delay_minutes=60),
    ]
    assert ann.notification_rules == doc.NotificationRules(high=steps, low=steps)
    assert notes(translation, "user") == [
        ("approximated", "bob@x.test", "blocked at Opsgenie: imported deactivated"),
        ("skipped", "not-an-email", "no email address: Tocsin matches people by email"),
    ]
    assert [why for _, _, why in notes(translation, "contact_method")] == [
        "push to the Opsgenie app",
        "sms '1-12' is not a valid address",
    ]
    assert notes(translation, "notification_rule") == [
        ("skipped", "ann@x.test Started", "schedule-start notices"),
        ("approximated", "ann@x.test New", "its conditions or hours: Tocsin's applies to every page"),
        ("skipped", "ann@x.test Second", "Tocsin keeps one rule per urgency"),
    ]


def test_escalation_delays_count_between_levels_and_what_differs() -> None:
    def rule(minutes: int, recipient: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {
            "condition": "if-not-acked",
            "notifyType": "default",
            "delay": {"timeAmount": minutes},
            "recipient": recipient,
            **extra,
        }

    account = OpsgenieAccount(
        users=[person("u1", "a@x.test"), person("u2", "b@x.test")],
        escalations=[
            {
                "id": "e1",
                "name": "Main",
                "repeat": {"waitInterval": 20, "count": 30},
                "rules": [
                    rule(5, {"type": "user", "id": "u1"}),
                    rule(5, {"type": "user", "username": "b@x.test"}),
                    rule(15, {"type": "user", "id": "u2"}, condition="if-not-closed", notifyType="next"),
                    rule(40, {"type": "team", "id": "t9", "name": "Ops"}),
                    rule(50, {"type": "user", "id": "u1"}),
                ],
            },
            {"id": "e2", "name": "Nobody", "rules": [rule(0, {"type": "team", "id": "t9"})]},
        ],
    )
    translation = translate(account)
    [policy] = translation.document.escalation_policies or []
    assert policy.repeat_count == 9
    assert [(level.delay_minutes, [t.user for t in level.targets]) for level in policy.levels] == [
        (10, ["a@x.test", "b@x.test"]),
        (35, ["b@x.test"]),
        (20, ["a@x.test"]),
    ]
    [(_, _, why), skipped] = notes(translation, "escalation_policy")
    for part in (
        "Ops after 40 min: a team target was not carried over",
        "'if not closed'",
        "notify next",
        "the first rule waits 5 min",
        "repeats 30 times",
    ):
        assert part in why
    assert skipped == ("skipped", "Nobody", "no rule has a target Tocsin knows")


def test_team_routing_gives_the_policy_of_the_teams_services() -> None:
    schedule = {
        "id": "s1",
        "name": "Primary",
        "timezone": "Europe/Berlin",
        "rotations": [
            {
                "id": "r1",
                "name": "R",
                "type": "weekly",
                "startDate": "2026-11-02T09:00:00Z",
                "participants": [{"type": "user", "id": "u1"}],
            }
        ],
    }
    escalation = {
        "id": "e1",
        "name": "Payments escalation",
        "ownerTeam": {"id": "t3"},
        "rules": [{"delay": {"timeAmount": 0}, "recipient": {"type": "user", "id": "u1"}}],
    }
    account = OpsgenieAccount(
        users=[person("u1", "a@x.test")],
        teams=[
            team(
                "t1",
                "Payments",
                [
                    *default_rule("escalation", "e1"),
                    {"id": "p1", "name": "P1 only", "isDefault": False, "notify": {"type": "escalation", "id": "e1"}},
                ],
            ),
            team("t2", "Search", default_rule("schedule", "s1")),
            team("t3", "Data", None),
            team("t4", "Quiet", default_rule("none", "")),
        ],
        schedules=[schedule],
        escalations=[escalation],
        services=[
            {"id": "v1", "name": "Checkout", "teamId": "t1"},
            {"id": "v2", "name": "Cart", "teamId": "t1"},
            {"id": "v3", "name": "Query", "teamId": "t2"},
        ],
        integrations=[
            {"id": "i1", "name": "Pay API", "type": "API", "teamId": "t1"},
            {"id": "i2", "name": "Search API", "type": "API", "teamId": "t2"},
            {"id": "i3", "name": "Data API", "type": "API", "teamId": "t3"},
            {"id": "i4", "name": "Global", "type": "API"},
        ],
    )
    translation = translate(account)
    policies = {p.name: p for p in translation.document.escalation_policies or []}
    assert policies["Primary (routing)"].levels == [
        doc.Level(delay_minutes=30, targets=[doc.Target(schedule="Primary")])
    ]
    services = {s.name: (s.team, s.escalation_policy) for s in translation.document.services or []}
    assert services == {
        "Checkout": ("Payments", "Payments escalation"),
        "Cart": ("Payments", "Payments escalation"),
        "Query": ("Search", "Primary (routing)"),
        "Payments": ("Payments", "Payments escalation"),  # two services: alerts land on the team's own
        "Data": ("Data", "Payments escalation"),  # routing unreadable: the escalation the team owns
    }
    assert {i.name: i.service for i in translation.document.integrations or []} == {
        "Pay API": "Payments",
        "Search API": "Query",
        "Data API": "Data",
        "Global": None,
    }
    assert ("skipped", "Payments: P1 only", "routing by alert content or time") in notes(translation, "routing_rule")
    team_notes = notes(translation, "team")
    assert ("approximated", "Quiet", "its alerts page none: its services get no policy") in team_notes
    assert any("routing rules could not be read" in why for _, name, why in team_notes if name == "Data")
    assert ("approximated", "Global", "it belongs to no team: alerts must name their service") in notes(
        translation, "integration"
    )


def test_integration_types_with_and_without_the_drop_in() -> None:
    types = [
        "API",
        "Prometheus",
        "Grafana",
        "CloudWatch",
        "NewRelicV2",
        "Sentry",
        "Webhook",
        "Datadog",
        "Email",
        "Heartbeat",
        "AmazonSns",
    ]
    account = OpsgenieAccount(
        teams=[team("t1", "Ops", None)],
        integrations=[
            {"id": f"i{n}", "name": kind, "type": kind, "teamId": "t1", "enabled": n != 0}
            for n, kind in enumerate(types)
        ],
    )
    without = {i.name: i.type for i in translate(account).document.integrations or []}
    assert without == {
        "API": "custom",
        "Prometheus": "alertmanager",
        "Grafana": "alertmanager",
        "CloudWatch": "cloudwatch",
        "NewRelicV2": "newrelic",
        "Sentry": "sentry",
        "Webhook": "custom",
        "Datadog": "custom",
        "AmazonSns": "cloudwatch",
    }
    translation = translate(account, Existing(integration_types=WITH_DROP_IN))
    made = {i.name: i.type for i in translation.document.integrations or []}
    assert made["API"] == made["Prometheus"] == made["Grafana"] == "opsgenie"
    assert {i.name for i in translation.intakes if i.keeps_payload} == {"API", "Prometheus", "Grafana"}
    skipped = {name: why for outcome, name, why in notes(translation, "integration") if outcome == "skipped"}
    assert skipped == {
        "Email": "Tocsin takes no alerts by email or phone call",
        "Heartbeat": "heartbeats are imported as Tocsin heartbeats, each with its own ping URL",
    }
    assert ("approximated", "API", "disabled at Opsgenie; imported active") in notes(translation, "integration")


def test_heartbeats_are_paused_until_cut_over_unless_a_person_resumed_them() -> None:
    account = OpsgenieAccount(
        teams=[team("t1", "Ops", None), team("t2", "Web", None)],
        heartbeats=[
            {"name": "nightly", "interval": 1, "intervalUnit": "days", "enabled": True, "ownerTeam": {"id": "t1"}},
            {"name": "fast", "interval": 30, "intervalUnit": "minutes", "enabled": False, "ownerTeam": {"id": "t1"}},
            {"name": "rare", "interval": 30, "intervalUnit": "days", "ownerTeam": {"id": "t2"}},
            {"name": "orphan", "interval": 5, "intervalUnit": "minutes"},
        ],
    )
    translation = translate(account, Existing(heartbeats_enabled={"fast": True}))
    beats = {b.name: (b.service, b.interval_seconds, b.enabled) for b in translation.document.heartbeats or []}
    assert beats == {"nightly": ("Ops", 86400, False), "fast": ("Ops", 1800, True), "rare": ("Web", 604800, False)}
    assert translation.heartbeats == ["nightly", "fast", "rare"]
    assert notes(translation, "heartbeat") == [
        ("approximated", "fast", "disabled at Opsgenie"),
        ("approximated", "rare", "an interval of 2592000 s: Tocsin's is 60 s to 7 days"),
        ("skipped", "orphan", "it belongs to no team: a Tocsin heartbeat needs a service"),
    ]


def test_maintenance_silences_the_services_of_its_integrations() -> None:
    def window(wid: str, rules: list[dict[str, Any]], **time: str) -> dict[str, Any]:
        return {
            "id": wid,
            "status": "planned",
            "description": f"Window {wid}",
            "rules": rules,
            "time": {"type": "schedule", **time},
        }

    integration = [{"entity": {"type": "integration", "id": "i1"}}]
    account = OpsgenieAccount(
        teams=[team("t1", "Ops", None)],
        integrations=[{"id": "i1", "name": "API", "type": "API", "teamId": "t1"}],
        maintenances=[
            window(
                "m1",
                [*integration, {"entity": {"type": "policy", "id": "p1"}}],
                startDate="2026-11-23T10:00:00Z",
                endDate="2026-11-23T11:00:00Z",
            ),
            window("m2", integration, startDate="2026-11-23T10:00:00Z"),
            window("m3", integration, startDate="2026-11-01T10:00:00Z", endDate="2026-11-02T10:00:00Z"),
        ],
    )
    translation = translate(account)
    [made] = translation.document.maintenance_windows or []
    assert (made.description, made.services) == ("Window m1", ["Ops"])
    assert notes(translation, "maintenance_window") == [
        ("approximated", "Window m1", "silences every alert of 'Ops', not one integration"),
        ("skipped", "Window m1: policy p1", "Tocsin's maintenance silences services, not alert policies"),
        ("skipped", "Window m2", "it has no end"),
    ]
