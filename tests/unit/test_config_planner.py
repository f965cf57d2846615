"""The configuration planner, a pure function: (desired, current, now, prune) -> ordered actions.
Tables of small documents: create, update a field, rename found by source, delete only with
prune, dependency order, nothing to do, deactivation, what is still in use. The kinds' own rules
are in test_config_planner_kinds.py."""

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
