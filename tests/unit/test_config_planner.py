"""The configuration planner, a pure function: (desired, current, now, prune) -> ordered actions.
Tables of small documents: create, update a field, rename found by source, delete only with
prune, dependency order, nothing to do, and the kinds' own rules (deactivation, event rule order,
maintenance windows, what the API cannot change, what is still in use)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chalicelib.client.document import Document
from chalicelib.client.planner import Plan, plan

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
LATER = NOW + timedelta(days=3)

ALICE = {"email": "alice@example.com", "name": "Alice"}
BOB = {"email": "bob@example.com", "name": "Bob"}
TEAM = {"name": "Platform", "members": ["alice@example.com"]}
LAYER = {
    "name": "Weekly",
    "members": ["alice@example.com"],
    "rotation": "weekly",
    "handoff_time": "09:00",
    "start": "2026-11-02T09:00:00Z",
}
SCHEDULE = {"name": "Primary", "time_zone": "Europe/Berlin", "layers": [LAYER]}
POLICY = {"name": "Default", "levels": [{"delay_minutes": 10, "targets": [{"schedule": "Primary"}]}]}
SERVICE = {"name": "Payments", "escalation_policy": "Default"}
INTEGRATION = {"name": "Prometheus", "type": "alertmanager", "service": "Payments"}
HEARTBEAT = {"name": "backup", "service": "Payments", "interval_seconds": 3600}
PAGE = {"name": "Public", "slug": "acme", "sections": [{"name": "Core", "components": [{"name": "API"}]}]}


def document(**sections: Any) -> Document:
    return Document.model_validate({"version": 1, **sections})


def ops(result: Plan) -> list[tuple[str, str, str]]:
    return [(action.op, action.section, action.key) for action in result.actions]


def fields(result: Plan) -> list[list[str]]:
    return [[change.field for change in action.changes] for action in result.actions]


def rule(description: str, **more: Any) -> dict[str, Any]:
    return {"description": description, "actions": {"suppress": True}, **more}


@pytest.mark.parametrize(
    ("desired", "current", "prune", "expected"),
    [
        pytest.param(
            {"services": [SERVICE], "escalation_policies": [POLICY]},
            {"services": [], "escalation_policies": [POLICY]},
            False,
            [("create", "services", "payments")],
            id="create",
        ),
        pytest.param(
            {"services": [{**SERVICE, "description": "Cards"}]},
            {"services": [SERVICE]},
            False,
            [("update", "services", "payments")],
            id="update a field",
        ),
        pytest.param(
            {"services": [SERVICE]},
            {"services": [SERVICE]},
            True,
            [],
            id="nothing to do",
        ),
        pytest.param(
            {"heartbeats": [HEARTBEAT]},
            {"heartbeats": [HEARTBEAT, {**HEARTBEAT, "name": "old"}]},
            False,
            [],
            id="extra kept without prune",
        ),
        pytest.param(
            {"heartbeats": [HEARTBEAT]},
            {"heartbeats": [HEARTBEAT, {**HEARTBEAT, "name": "old"}]},
            True,
            [("delete", "heartbeats", "old")],
            id="extra deleted with prune",
        ),
        pytest.param(
            {"heartbeats": None},
            {"heartbeats": [HEARTBEAT]},
            True,
            [],
            id="a section left out is not managed, even with prune",
        ),
        pytest.param(
            {"users": [ALICE]},
            {"users": [ALICE, {**BOB, "active": False}]},
            True,
            [],
            id="a deactivated user is as deleted as the API makes it",
        ),
        pytest.param(
            {"users": [{**ALICE, "name": "Alice B."}]},
            {"users": [{**ALICE, "email": "ALICE@example.com"}]},
            False,
            [("update", "users", "alice@example.com")],
            id="users are found by email whatever its case",
        ),
        pytest.param(
            {"teams": [{**TEAM, "name": "platform"}]},
            {"teams": [TEAM]},
            False,
            [("update", "teams", "platform")],
            id="a name's case is a rename of the same object",
        ),
    ],
)
def test_plan_table(desired: dict[str, Any], current: dict[str, Any], prune: bool, expected: list[Any]) -> None:
    result = plan(document(**desired), document(**current), now=NOW, prune=prune)
    assert ops(result) == expected


def test_update_names_each_changed_field_as_written() -> None:
    desired = document(services=[{**SERVICE, "description": "Cards", "escalation_policy": "Paging"}])
    result = plan(desired, document(services=[SERVICE]), now=NOW)
    (action,) = result.actions
    assert [(c.field, c.before, c.after) for c in action.changes] == [
        ("description", None, "Cards"),
        ("escalation_policy", "Default", "Paging"),
    ]
    assert result.changes == [action]


def test_rename_is_found_by_source_and_updates_rather_than_duplicates() -> None:
    source = {"vendor": "pagerduty", "id": "PSVC1"}
    current = document(services=[{**SERVICE, "name": "Payments"}])
    desired = document(services=[{**SERVICE, "name": "Payments API", "source": source}])
    sources = {("services", "payments"): {("pagerduty", "PSVC1")}}
    result = plan(desired, current, now=NOW, sources=sources)
    assert ops(result) == [("update", "services", "payments api")]
    assert result.actions[0].current_key == "payments"
    assert fields(result) == [["name"]]
    # Without the ledger's record, the new name is a new object (and the old one kept).
    unlinked = plan(desired, current, now=NOW)
    assert ops(unlinked) == [("create", "services", "payments api")]
    assert unlinked.kept == [("services", "Payments")]


def test_a_source_not_yet_recorded_is_an_update_of_its_own() -> None:
    desired = document(services=[{**SERVICE, "source": {"vendor": "opsgenie", "id": "s-1"}}])
    result = plan(desired, document(services=[SERVICE]), now=NOW)
    assert fields(result) == [["source"]]
    recorded = plan(
        desired, document(services=[SERVICE]), now=NOW, sources={("services", "payments"): {("opsgenie", "s-1")}}
    )
    assert recorded.actions == []


def test_dependency_order_creates_first_then_deletes_in_reverse() -> None:
    desired = document(
        users=[ALICE],
        teams=[TEAM],
        schedules=[{**SCHEDULE, "team": "Platform"}],
        escalation_policies=[POLICY],
        services=[SERVICE],
        integrations=[INTEGRATION],
        event_rules=[rule("quiet")],
        maintenance_windows=[
            {
                "description": "upgrade",
                "services": ["Payments"],
                "start": LATER.isoformat(),
                "end": (LATER + timedelta(hours=1)).isoformat(),
            }
        ],
        heartbeats=[HEARTBEAT],
        status_pages=[PAGE],
    )
    current = document(
        users=[],
        teams=[],
        schedules=[{**SCHEDULE, "name": "Old"}],
        escalation_policies=[
            {**POLICY, "name": "Old policy", "levels": [{"delay_minutes": 5, "targets": [{"schedule": "Old"}]}]}
        ],
        services=[],
        integrations=[],
        event_rules=[],
        maintenance_windows=[],
        heartbeats=[{**HEARTBEAT, "name": "old"}],
        status_pages=[],
    )
    result = plan(desired, current, now=NOW, prune=True)
    assert [(a.op, a.section) for a in result.actions] == [
        ("create", "users"),
        ("create", "teams"),
        ("create", "schedules"),
        ("create", "escalation_policies"),
        ("create", "services"),
        ("create", "integrations"),
        ("create", "event_rules"),
        ("create", "maintenance_windows"),
        ("create", "heartbeats"),
        ("create", "status_pages"),
        ("delete", "heartbeats"),
        ("delete", "escalation_policies"),  # before the schedule it names
        ("delete", "schedules"),
    ]


def test_prune_deactivates_users_teams_services_and_revokes_integrations() -> None:
    current = document(users=[ALICE], teams=[TEAM], services=[SERVICE], integrations=[INTEGRATION])
    empty = document(users=[], teams=[], services=[], integrations=[])
    result = plan(empty, current, now=NOW, prune=True)
    assert [(a.op, a.section, a.reason) for a in result.actions] == [
        ("delete", "integrations", "revoked: its URL stops answering"),
        ("delete", "services", "deactivated (the API keeps it)"),
        ("delete", "teams", "deactivated (the API keeps it)"),
        ("delete", "users", "deactivated (the API keeps it)"),
    ]


def test_what_is_still_in_use_is_not_deleted_and_a_pruned_service_lets_go_of_its_policy() -> None:
    current = document(schedules=[SCHEDULE], escalation_policies=[POLICY], services=[SERVICE])
    # Policies left out of the document: Default stays, and it names the schedule.
    in_use = plan(document(schedules=[]), current, now=NOW, prune=True)
    assert [(a.op, a.section, a.reason) for a in in_use.actions] == [("skip", "schedules", "still used by Default")]
    assert in_use.changes == []
    everything = plan(document(schedules=[], escalation_policies=[], services=[]), current, now=NOW, prune=True)
    assert ops(everything) == [
        ("delete", "services", "payments"),
        ("delete", "escalation_policies", "default"),
        ("delete", "schedules", "primary"),
    ]
    assert everything.actions[0].detach_policy is True


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
