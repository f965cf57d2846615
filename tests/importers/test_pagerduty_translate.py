"""PagerDuty's objects as the configuration document, object by object, and every reason an
object is not carried over or only approximately (the plan's "not imported" and "approximated"
rows)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chalicelib.client import document as doc
from chalicelib.client.importers import pagerduty_translate
from chalicelib.client.importers.accounts import PagerDutyAccount
from chalicelib.client.importers.context import Context, Existing, Translation
from tests.importers import harness

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def user(uid: str, email: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": uid,
        "name": f"Person {uid}",
        "email": email,
        "role": "user",
        "contact_methods": [],
        "notification_rules": [],
        **extra,
    }


def translate(account: PagerDutyAccount, existing: Existing | None = None) -> Translation:
    return pagerduty_translate.translate(account, Context("pagerduty", NOW, existing or Existing()))


def reasons(translation: Translation, kind: str) -> list[tuple[str, str, str]]:
    return [(n.outcome, n.name, n.reason) for n in translation.notes.items if n.kind == kind]


def test_the_whole_account_translates_and_validates() -> None:
    account, _ = harness.pagerduty_read(NOW)
    translation = translate(account)
    document = doc.Document.model_validate(translation.document.model_dump(mode="json", by_alias=True))
    counts = {section: len(document.section(section) or []) for section, _ in doc.SECTIONS}
    assert counts == {
        "users": 40,
        "teams": 8,
        "schedules": 10,
        "escalation_policies": 12,
        "services": 30,
        "integrations": 35,
        "event_rules": 0,
        "maintenance_windows": 2,
        "heartbeats": 0,
        "status_pages": 0,
    }
    assert all(item.source and item.source.vendor == "pagerduty" for item in document.users or [])
    assert len(translation.intakes) == 35


def test_users_roles_contact_methods_and_rules() -> None:
    methods = [
        {"id": "E", "type": "email_contact_method", "label": "Work", "address": "ann@x.test"},
        {"id": "E2", "type": "email_contact_method", "label": "Home", "address": "ann@home.test"},
        {"id": "S", "type": "sms_contact_method", "label": "Mobile", "country_code": 44, "address": "7700 900123"},
        {"id": "P", "type": "phone_contact_method", "label": "Desk", "country_code": 1, "address": "5550100001"},
        {"id": "A", "type": "push_notification_contact_method", "label": "iPhone", "address": "tok"},
        {"id": "W", "type": "whatsapp_contact_method", "label": "WA", "country_code": 1, "address": "5550100001"},
        {"id": "B", "type": "sms_contact_method", "label": "Broken", "country_code": 1, "address": "12"},
    ]
    rules = [
        {"id": "R1", "urgency": "high", "start_delay_in_minutes": 0, "contact_method": {"id": "E"}},
        {"id": "R2", "urgency": "high", "start_delay_in_minutes": 2, "contact_method": {"id": "S"}},
        {"id": "R3", "urgency": "low", "start_delay_in_minutes": 5000, "contact_method": {"id": "P"}},
        {"id": "R4", "urgency": "high", "start_delay_in_minutes": 1, "contact_method": {"id": "A"}},
    ]
    account = PagerDutyAccount(
        users=[
            user("P1", "Ann@X.test", role="owner", contact_methods=methods, notification_rules=rules),
            user("P2", "bob@x.test", role="observer"),
            user("P3", "kept@x.test", role="admin"),
            user("P4", "", role="user"),
        ]
    )
    translation = translate(account, Existing(roles={"kept@x.test": "viewer"}))
    ann, bob, kept = translation.document.users or []
    assert (ann.email, ann.role, bob.role, kept.role) == ("Ann@X.test", "admin", "viewer", "viewer")
    assert [(m.type, m.address, m.label) for m in ann.contact_methods or []] == [
        ("email", "ann@home.test", "Home"),
        ("sms", "+447700900123", "Mobile"),
        ("voice", "+15550100001", "Desk"),
    ]
    assert ann.notification_rules == doc.NotificationRules(
        high=[
            doc.RuleStep(type="email", address="ann@x.test", delay_minutes=0),
            doc.RuleStep(type="sms", address="+447700900123", delay_minutes=2),
        ],
        low=[doc.RuleStep(type="voice", address="+15550100001", delay_minutes=1440)],
    )
    assert bob.notification_rules is None  # no rules at PagerDuty: Tocsin's defaults stay
    assert ("approximated", "Ann@X.test", "PagerDuty's account owner") in reasons(translation, "user")
    assert ("skipped", "Person P4", "no email address: Tocsin matches and invites people by email") in reasons(
        translation, "user"
    )
    skipped = [name for _, name, _ in reasons(translation, "contact_method")]
    assert skipped == ["Ann@X.test iPhone", "Ann@X.test WA", "Ann@X.test Broken"]
    assert reasons(translation, "notification_rule") == [
        ("skipped", "Ann@X.test", "its contact method was not carried over")
    ]


def test_teams_keep_their_tocsin_members_and_say_roles_are_not_carried_over() -> None:
    account = PagerDutyAccount(
        users=[user("P1", "a@x.test"), user("P2", "b@x.test")],
        teams=[
            {
                "id": "T1",
                "name": "Payments",
                "members": [
                    {"user": {"id": "P1"}, "role": "manager"},
                    {"user": {"id": "P2"}, "role": "responder"},
                    {"user": {"id": "GONE"}, "role": "responder"},
                ],
            }
        ],
    )
    kept = doc.User(email="z@x.test", name="Zed", role="viewer")
    existing = Existing(team_members={"payments": ["a@x.test", "z@x.test"]}, users={"z@x.test": kept})
    translation = translate(account, existing)
    [team] = translation.document.teams or []
    assert team.members == ["a@x.test", "b@x.test", "z@x.test"]
    assert (translation.document.users or [])[-1] == kept  # named by a team, so in the document, as it is
    assert reasons(translation, "team") == [("approximated", "Payments", "team roles (manager) are not carried over")]


def test_policies_levels_delays_and_what_cannot_be_targeted() -> None:
    account = PagerDutyAccount(
        users=[user("P1", "a@x.test")],
        escalation_policies=[
            {
                "id": "EP1",
                "name": "Main",
                "num_loops": 12,
                "escalation_rules": [
                    {
                        "escalation_delay_in_minutes": 10,
                        "targets": [
                            {"type": "user_reference", "id": "P1"},
                            {"type": "schedule_reference", "id": "NOPE"},
                        ],
                    },
                    {"escalation_delay_in_minutes": 0, "targets": [{"type": "user_reference", "id": "GONE"}]},
                    {
                        "escalation_delay_in_minutes": 5000,
                        "targets": [{"type": "user", "id": "P1"}],
                        "escalation_rule_assignment_strategy": "round_robin",
                    },
                ],
            },
            {"id": "EP2", "name": "Empty", "escalation_rules": [{"escalation_delay_in_minutes": 5, "targets": []}]},
        ],
    )
    translation = translate(account)
    [policy] = translation.document.escalation_policies or []
    assert (policy.name, policy.repeat_count) == ("Main", 9)
    assert [(level.delay_minutes, level.targets) for level in policy.levels] == [
        (10, [doc.Target(user="a@x.test")]),
        (1440, [doc.Target(user="a@x.test")]),
    ]
    [(outcome, _, why), skipped] = reasons(translation, "escalation_policy")
    assert outcome == "approximated"
    for part in (
        "level 1: target NOPE was not carried over",
        "level 2 has no target left and is left out",
        "level 3: round robin",
        "level 3: a delay of 5000 minutes",
        "repeats 12 times",
    ):
        assert part in why
    assert skipped == ("skipped", "Empty", "no level has a target Tocsin knows")


def service(sid: str, **extra: Any) -> dict[str, Any]:
    return {"id": sid, "name": f"Service {sid}", "status": "active", "integrations": [], **extra}


def test_services_urgency_support_hours_grouping_and_what_has_no_equivalent() -> None:
    hours = {
        "type": "fixed_time_per_day",
        "time_zone": "Eastern Time (US & Canada)",
        "days_of_week": [1, 2, 3, 4, 5],
        "start_time": "09:00:00",
        "end_time": "17:00:00",
    }
    support = {
        "type": "use_support_hours",
        "during_support_hours": {"type": "constant", "urgency": "high"},
        "outside_support_hours": {"type": "constant", "urgency": "low"},
    }
    inverted = {
        **support,
        "outside_support_hours": {"type": "constant", "urgency": "high"},
        "during_support_hours": {"type": "constant", "urgency": "severity_based"},
    }
    account = PagerDutyAccount(
        services=[
            service("S1", incident_urgency_rule={"type": "constant", "urgency": "low"}, status="disabled"),
            service(
                "S2",
                incident_urgency_rule=support,
                support_hours=hours,
                alert_grouping_parameters={"type": "time", "config": {"timeout": 0}},
            ),
            service(
                "S3",
                incident_urgency_rule=inverted,
                support_hours=hours,
                scheduled_actions=[{"type": "x"}],
                alert_grouping_parameters={
                    "type": "content_based",
                    "config": {"fields": ["summary", "component"], "time_window": 600},
                },
            ),
            service(
                "S4",
                incident_urgency_rule=support,
                alert_grouping_parameters={"type": "intelligent"},
                auto_resolve_timeout=14400,
                acknowledgement_timeout=1800,
                escalation_policy={"id": "MISSING", "type": "escalation_policy_reference"},
            ),
        ]
    )
    translation = translate(account)
    s1, s2, s3, s4 = translation.document.services or []
    assert (s1.urgency_rule.type, s1.active) == ("low", False)
    assert s2.urgency_rule == doc.UrgencyRule(
        type="high",
        support_hours=doc.SupportHours(
            time_zone="America/New_York", days=["mon", "tue", "wed", "thu", "fri"], start="09:00", end="17:00"
        ),
    )
    assert s2.alert_grouping == doc.AlertGrouping(type="time", window_minutes=1440)
    assert s3.urgency_rule.type == "severity_based" and s3.urgency_rule.support_hours is not None
    assert s3.alert_grouping == doc.AlertGrouping(type="content", fields=["title"], window_minutes=10)
    assert s4.urgency_rule == doc.UrgencyRule(type="high") and s4.alert_grouping.type == "none"
    assert s4.escalation_policy is None
    why = [text for _, name, text in reasons(translation, "service")]
    for part in (
        "time-based grouping until the incident resolves",
        "outside support hours PagerDuty uses high urgency",
        "scheduled actions",
        "content grouping on component",
        "its support hours could not be read",
        "intelligent alert grouping has no Tocsin equivalent",
        "auto-resolve after 14400 s",
        "acknowledgement timeout after 1800 s",
        "its escalation policy was not carried over",
    ):
        assert any(part in text for text in why), part


def test_integrations_by_type_and_vendor() -> None:
    kinds = [
        ("events_api_v2_inbound_integration", None, "pagerduty", True, None),
        ("generic_events_api_inbound_integration", "New Relic", "pagerduty", False, "Events API v1"),
        ("aws_cloudwatch_inbound_integration", None, "cloudwatch", False, None),
        ("generic_email_inbound_integration", None, None, False, "Tocsin takes no alerts by email"),
        ("sentry_inbound_integration", "Sentry", "sentry", False, None),
        ("prometheus_inbound_integration", "Prometheus", "alertmanager", False, None),
        ("nagios_inbound_integration", "Nagios", "custom", False, "Nagios has no Tocsin integration of its own"),
    ]
    items = [
        {"id": f"I{n}", "type": kind, "name": f"In {n}", **({"vendor": {"summary": v}} if v else {})}
        for n, (kind, v, *_) in enumerate(kinds)
    ]
    translation = translate(PagerDutyAccount(services=[service("S1", integrations=items)]))
    made = {i.source.id: i.type for i in translation.document.integrations or [] if i.source}
    keeping = {i.vendor_id: i.keeps_payload for i in translation.intakes}
    for n, (_, _, tocsin_type, keeps, why) in enumerate(kinds):
        assert made.get(f"I{n}") == tocsin_type
        assert keeping.get(f"I{n}", False) is keeps
        notes = [note.reason for note in translation.notes.items if note.vendor_id == f"I{n}"]
        assert (why is None and notes == []) or (why is not None and why in notes[0])
    assert [(i.type, i.keeps_payload) for i in translation.intakes][:2] == [("pagerduty", True), ("pagerduty", False)]
    assert {i.service for i in translation.document.integrations or []} == {"Service S1"}


def test_maintenance_windows_and_unreadable_sections() -> None:
    window = {
        "id": "M1",
        "start_time": "2026-11-23T10:00:00Z",
        "end_time": "2026-11-23T12:00:00Z",
        "description": "Upgrade",
        "services": [{"id": "S1"}],
    }
    account = PagerDutyAccount(
        services=[service("S1")],
        maintenance_windows=[
            window,
            {**window, "id": "M2", "services": [{"id": "S9"}]},
            {**window, "id": "M3", "end_time": "2026-11-01T00:00:00Z"},
        ],
        unavailable={"teams": "GET /teams: 403"},
    )
    translation = translate(account)
    assert [(w.description, w.services) for w in translation.document.maintenance_windows or []] == [
        ("Upgrade", ["Service S1"])
    ]
    assert reasons(translation, "maintenance_window") == [
        ("skipped", "Upgrade", "none of its services was carried over")
    ]
    assert reasons(translation, "team") == [("skipped", "teams", "could not be read: GET /teams: 403")]
