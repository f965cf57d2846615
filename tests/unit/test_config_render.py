"""The plan as a person reads it and as JSON: a line per object with its sign, each changed field
before and after (lists as items added and removed, objects field by field), what is kept
without --prune, the summary; and what an apply showed once."""

from __future__ import annotations

import json

from chalicelib.client.document import Integration
from chalicelib.client.planner import Action, Change, Plan
from chalicelib.client.reconcile import Issued, Outcome
from chalicelib.client.render import as_json, outcome_text, text


def sample() -> Plan:
    return Plan(
        actions=[
            Action("create", "users", "a@example.com", "a@example.com"),
            Action(
                "update",
                "services",
                "payments api",
                "Payments API",
                [
                    Change("name", "Payments", "Payments API"),
                    Change(
                        "urgency_rule",
                        {"type": "severity_based", "support_hours": None},
                        {"type": "high", "support_hours": None},
                    ),
                ],
                current_key="payments",
            ),
            Action(
                "update",
                "schedules",
                "primary",
                "Primary",
                [Change("layers", [{"name": "W", "members": ["a", "b"]}], [{"name": "W", "members": ["a"]}])],
            ),
            Action("update", "teams", "ops", "Ops", [Change("members", ["a", "b"], ["b", "a", "c"])]),
            Action("update", "event_rules", "/x", "x", [Change("position", 2, 0)], position=0),
            Action("create", "event_rules", "/y", "y", position=1),
            Action(
                "skip",
                "heartbeats",
                "backup",
                "backup",
                [Change("service", "Web", "Payments")],
                "a heartbeat's service cannot change: delete it and create another (a new ping URL)",
            ),
            Action(
                "delete", "integrations", "old", "Old", reason="revoked: its URL stops answering", current_key="old"
            ),
        ],
        kept=[("escalation_policies", "Legacy")],
    )


def test_text_shows_each_object_and_what_changes() -> None:
    assert text(sample(), organization="Acme").splitlines() == [
        "Organization: Acme",
        "  + user 'a@example.com'",
        "  ~ service 'Payments API' (found by its source)",
        '      name: "Payments" -> "Payments API"',
        '      urgency_rule.type: "severity_based" -> "high"',
        "  ~ schedule 'Primary'",
        "      layers[0].members:",
        '        - "b"',
        "  ~ team 'Ops'",
        "      members:",
        '        + "c"',
        "  ~ event rule 'x'",
        "      position: 2 -> 0",
        "  + event rule 'y' at position 1",
        "  ! heartbeat 'backup': a heartbeat's service cannot change: delete it and create another (a new ping URL)",
        '      service: "Web" -> "Payments"',
        "  - integration 'Old': revoked: its URL stops answering",
        "  1 object(s) of the organization are not in the document and are kept (--prune deletes them): "
        "escalation policy 'Legacy'",
        "Plan: 2 to create, 4 to update, 1 to delete, 1 skipped.",
    ]


def test_a_reordered_list_and_the_summaries_of_no_change() -> None:
    reordered = Plan([Action("update", "teams", "ops", "Ops", [Change("members", ["a", "b"], ["b", "a"])])])
    assert '      members: reordered: ["b", "a"]' in text(reordered)
    assert text(Plan()) == "No changes. The organization matches the document.\n"
    skipped = Plan([Action("skip", "integrations", "x", "X", [Change("type", "custom", "sentry")], "cannot")])
    assert text(skipped).splitlines()[-1] == "No changes can be made: 1 skipped (marked !, with what to do)."
    assert text(Plan(kept=[("users", "b@example.com")]), prune=True).splitlines() == [
        "No changes. The organization matches the document."
    ]


def test_long_values_are_cut() -> None:
    long = Plan([Action("update", "services", "s", "S", [Change("description", "x" * 500, None)])])
    (_, line) = text(long).splitlines()[:2]
    assert line.endswith("... -> null") and len(line) < 260


def test_json_has_every_action_and_the_summary() -> None:
    body = json.loads(as_json(sample(), organization="Acme"))
    assert body["organization"] == "Acme" and body["changes_pending"] is True
    assert body["summary"] == {"create": 2, "update": 4, "delete": 1, "skip": 1}
    assert body["actions"][1] == {
        "op": "update",
        "kind": "service",
        "key": "payments api",
        "name": "Payments API",
        "reason": None,
        "position": None,
        "changes": [
            {"field": "name", "before": "Payments", "after": "Payments API"},
            {
                "field": "urgency_rule",
                "before": {"type": "severity_based", "support_hours": None},
                "after": {"type": "high", "support_hours": None},
            },
        ],
    }
    assert body["kept"] == [{"section": "escalation_policies", "name": "Legacy"}]
    assert json.loads(as_json(Plan()))["changes_pending"] is False


def test_what_an_apply_showed_once() -> None:
    desired = Integration(name="Prometheus", type="alertmanager")
    outcome = Outcome(
        done=[Action("create", "integrations", "prometheus", "Prometheus", desired=desired)],
        issued=[Issued("integrations", "Prometheus", {"url": "https://t/webhooks/k", "routing_key": "k"})],
    )
    assert outcome_text(outcome).splitlines() == [
        "Applied: 1 created, 0 updated, 0 deleted.",
        "Shown once, keep them now (put each URL or key in its sender):",
        "  integration 'Prometheus': url=https://t/webhooks/k, routing_key=k",
    ]
    assert outcome_text(Outcome()) == "No changes. The organization matches the document.\n"
