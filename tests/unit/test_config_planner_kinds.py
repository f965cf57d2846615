"""The configuration planner's rules for particular kinds: event rules keep the document's order
per list (any reordering ends right in one apply), maintenance windows that are over or started,
what the API cannot change, nested parts and overrides, equal meanings, and references to objects
renamed by their source."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib.client.planner import plan
from tests.unit.test_config_planner import (
    ALICE,
    HEARTBEAT,
    INTEGRATION,
    LATER,
    LAYER,
    NOW,
    PAGE,
    SCHEDULE,
    SERVICE,
    TEAM,
    document,
    fields,
    ops,
    rule,
)


@pytest.mark.parametrize(
    ("desired", "current", "prune", "expected"),
    [
        pytest.param(["a", "b"], [], False, [("create", "/a", 0, []), ("create", "/b", 1, [])], id="create in order"),
        pytest.param(["a", "b"], ["a", "b"], False, [], id="in place"),
        pytest.param(["b", "a"], ["a", "b"], False, [("update", "/b", 0, ["position"])], id="moved"),
        pytest.param(["a"], ["x", "a"], False, [("update", "/a", 0, ["position"])], id="extras stay after"),
        pytest.param(["a"], ["a", "x"], False, [], id="extras after are in place"),
        pytest.param(["a"], ["x", "a"], True, [("delete", "/x", None, [])], id="prune first, then in place"),
        pytest.param(["c", "a"], ["a"], False, [("create", "/c", 0, [])], id="inserted before"),
    ],
)
def test_event_rules_keep_the_documents_order(
    desired: list[str], current: list[str], prune: bool, expected: list[Any]
) -> None:
    result = plan(
        document(event_rules=[rule(d) for d in desired]),
        document(event_rules=[rule(c) for c in current]),
        now=NOW,
        prune=prune,
    )
    assert [(a.op, a.key, a.position, [c.field for c in a.changes]) for a in result.actions] == expected


def test_event_rule_lists_are_per_integration() -> None:
    desired = document(event_rules=[rule("a"), rule("a", integration="Prometheus")])
    current = document(event_rules=[rule("a", integration="Prometheus"), rule("a")])
    assert plan(desired, current, now=NOW).actions == []
    changed = document(event_rules=[rule("a"), rule("a", integration="Prometheus", actions={"drop": True})])
    result = plan(changed, current, now=NOW)
    assert ops(result) == [("update", "event_rules", "prometheus/a")]
    assert fields(result) == [["actions"]]


def test_maintenance_windows_over_or_started() -> None:
    over = {
        "description": "old",
        "services": ["Payments"],
        "start": "2026-11-01T00:00:00Z",
        "end": "2026-11-02T00:00:00Z",
    }
    started = {
        "description": "now",
        "services": ["Payments"],
        "start": "2026-11-22T11:00:00Z",
        "end": LATER.isoformat(),
    }
    result = plan(document(maintenance_windows=[over]), document(maintenance_windows=[]), now=NOW)
    assert [(a.op, a.reason) for a in result.actions] == [("skip", "the window is over")]
    # A started window's start is when it started: a document's earlier start is no change...
    earlier = {**started, "start": "2026-11-22T10:00:00Z"}
    assert plan(document(maintenance_windows=[earlier]), document(maintenance_windows=[started]), now=NOW).actions == []
    # ...a later one cannot be made (the API refuses to move a started window's start).
    moved = {**started, "start": "2026-11-23T00:00:00Z", "end": (LATER + timedelta(days=1)).isoformat()}
    result = plan(document(maintenance_windows=[moved]), document(maintenance_windows=[started]), now=NOW)
    assert [(a.op, [c.field for c in a.changes]) for a in result.actions] == [("update", ["end"]), ("skip", ["start"])]


def test_what_the_api_cannot_change_is_reported_not_attempted() -> None:
    result = plan(
        document(
            integrations=[{**INTEGRATION, "type": "custom", "name": "Prometheus"}],
            heartbeats=[{**HEARTBEAT, "service": "Other"}],
        ),
        document(integrations=[INTEGRATION], heartbeats=[HEARTBEAT]),
        now=NOW,
    )
    assert [(a.op, a.section) for a in result.actions] == [("skip", "integrations"), ("skip", "heartbeats")]
    assert "revoke it and create another" in result.actions[0].reason
    assert "new ping URL" in result.actions[1].reason
    assert result.changes == []


def test_nested_parts_the_document_does_not_name_stay_unless_pruning() -> None:
    desired_user = {**ALICE, "contact_methods": [{"type": "sms", "address": "+15551234567"}]}
    current_user = {
        **ALICE,
        "contact_methods": [
            {"type": "sms", "address": "+15551234567", "label": "SMS"},
            {"type": "voice", "address": "+15557654321"},
        ],
    }
    assert plan(document(users=[desired_user]), document(users=[current_user]), now=NOW).actions == []
    pruned = plan(document(users=[desired_user]), document(users=[current_user]), now=NOW, prune=True)
    assert fields(pruned) == [["contact_methods"]]
    # Left out, the methods are not managed at all; the account email is never one to manage.
    unmanaged = {**ALICE, "contact_methods": None}
    assert plan(document(users=[unmanaged]), document(users=[current_user]), now=NOW, prune=True).actions == []
    implied = {**ALICE, "contact_methods": [{"type": "email", "address": "Alice@Example.com"}]}
    assert (
        plan(document(users=[implied]), document(users=[{**ALICE, "contact_methods": []}]), now=NOW, prune=True).actions
        == []
    )

    page = {**PAGE, "sections": [{"name": "Core", "components": [{"name": "API"}, {"name": "Web"}]}, {"name": "Extra"}]}
    assert plan(document(status_pages=[PAGE]), document(status_pages=[page]), now=NOW).actions == []
    assert fields(plan(document(status_pages=[PAGE]), document(status_pages=[page]), now=NOW, prune=True)) == [
        ["sections", "components"]
    ]


def test_overrides_that_ended_are_history() -> None:
    ended = {"user": "alice@example.com", "start": "2026-11-01T00:00:00Z", "end": "2026-11-02T00:00:00Z"}
    coming = {"user": "alice@example.com", "start": LATER.isoformat(), "end": (LATER + timedelta(days=1)).isoformat()}
    current = document(schedules=[{**SCHEDULE, "overrides": [coming]}])
    assert plan(document(schedules=[{**SCHEDULE, "overrides": [ended, coming]}]), current, now=NOW).actions == []
    assert fields(plan(document(schedules=[{**SCHEDULE, "overrides": []}]), current, now=NOW, prune=True)) == [
        ["overrides"]
    ]


def test_equal_meanings_compare_equal() -> None:
    berlin = {**LAYER, "start": "2026-11-02T10:00:00+01:00"}
    hours = {"time_zone": "Europe/Berlin", "days": ["fri", "mon", "mon"], "start": "09:00", "end": "17:00"}
    desired = document(
        schedules=[{**SCHEDULE, "layers": [berlin]}],
        services=[
            {**SERVICE, "escalation_policy": "default", "urgency_rule": {"type": "high", "support_hours": hours}}
        ],
        integrations=[{**INTEGRATION, "ip_allowlist": ["203.0.113.7", "203.0.113.7/32"]}],
        teams=[{**TEAM, "members": ["ALICE@example.com"]}],
    )
    current = document(
        schedules=[SCHEDULE],
        services=[{**SERVICE, "urgency_rule": {"type": "high", "support_hours": {**hours, "days": ["mon", "fri"]}}}],
        integrations=[{**INTEGRATION, "ip_allowlist": ["203.0.113.7/32"]}],
        teams=[TEAM],
    )
    assert plan(desired, current, now=NOW).actions == []


def _run_rules(current: list[str], actions: list[Any]) -> list[str]:
    """The list as the server leaves it after the actions, in order (create/move: at position)."""
    order = list(current)
    for action in actions:
        name = (action.current_key or action.key).split("/", 1)[1]
        if action.op == "delete":
            order.remove(name)
        elif action.op == "create":
            order.insert(action.position, action.key.split("/", 1)[1])
        elif action.position is not None and any(c.field == "position" for c in action.changes):
            order.remove(name)
            order.insert(action.position, name)
    return order


@pytest.mark.parametrize("prune", [False, True])
def test_any_reordering_ends_in_the_documents_order_in_one_apply(prune: bool) -> None:
    from itertools import permutations

    for current in permutations(["a", "b", "c", "x"]):
        for desired in (*permutations(["a", "b", "c"]), ("c", "d", "a"), ("d",), ()):
            result = plan(
                document(event_rules=[rule(d) for d in desired]),
                document(event_rules=[rule(c) for c in current]),
                now=NOW,
                prune=prune,
            )
            after = _run_rules(list(current), result.actions)
            extras = [name for name in current if name not in desired]
            assert after == list(desired) + ([] if prune else extras), (current, desired, result.actions)
            again = plan(
                document(event_rules=[rule(d) for d in desired]),
                document(event_rules=[rule(name) for name in after]),
                now=NOW,
                prune=prune,
            )
            assert again.actions == [], (current, desired)


def test_a_renamed_integration_keeps_its_rules() -> None:
    sources = {("integrations", "prometheus"): {("opsgenie", "int-1")}}
    current = document(integrations=[INTEGRATION], event_rules=[rule("a", integration="Prometheus")])
    renamed = {**INTEGRATION, "name": "Prom", "source": {"vendor": "opsgenie", "id": "int-1"}}
    desired = document(integrations=[renamed], event_rules=[rule("a", integration="Prom")])
    result = plan(desired, current, now=NOW, prune=True, sources=sources)
    assert [(a.op, a.section, a.key, a.current_key) for a in result.actions] == [
        ("update", "integrations", "prom", "prometheus")
    ]
    changed = document(integrations=[renamed], event_rules=[rule("a", integration="Prom", actions={"drop": True})])
    result = plan(changed, current, now=NOW, prune=True, sources=sources)
    assert [(a.op, a.key, a.current_key) for a in result.actions if a.section == "event_rules"] == [
        ("update", "prom/a", "prometheus/a")
    ]


def test_references_to_an_object_renamed_by_source_are_no_change() -> None:
    sources = {("services", "payments"): {("pagerduty", "P1")}, ("users", "alice@example.com"): {("pagerduty", "U1")}}
    current = document(
        users=[ALICE],
        teams=[TEAM],
        services=[SERVICE],
        heartbeats=[HEARTBEAT],
        maintenance_windows=[
            {
                "description": "up",
                "services": ["Payments"],
                "start": LATER.isoformat(),
                "end": (LATER + timedelta(hours=1)).isoformat(),
            }
        ],
    )
    desired = document(
        users=[{**ALICE, "email": "alice@new.example", "source": {"vendor": "pagerduty", "id": "U1"}}],
        teams=[{**TEAM, "members": ["alice@new.example"]}],
        services=[{**SERVICE, "name": "Payments API", "source": {"vendor": "pagerduty", "id": "P1"}}],
        heartbeats=[{**HEARTBEAT, "service": "Payments API"}],
        maintenance_windows=[
            {
                "description": "up",
                "services": ["Payments API"],
                "start": LATER.isoformat(),
                "end": (LATER + timedelta(hours=1)).isoformat(),
            }
        ],
    )
    result = plan(desired, current, now=NOW, sources=sources)
    assert [(a.op, a.section, fields) for a, fields in zip(result.actions, fields(result), strict=True)] == [
        ("update", "users", ["email"]),
        ("update", "services", ["name"]),
    ]
