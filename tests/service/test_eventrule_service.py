"""Event rule lists on moto: a write that loses the race re-reads and re-applies (no rule lost),
the version-checked item, the storage cap, and decide()'s reads."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.errors import Conflict, NotFound
from chalicelib.eventrule import service
from chalicelib.eventrule.decide import decide
from chalicelib.eventrule.facts import AlertFacts, RuleDecision
from chalicelib.eventrule.rules import Actions
from chalicelib.eventrule.tables import EventRuleSetRecord, list_key
from tests.conftest import NOW, Org

FACTS = AlertFacts(title="Disk full", source="custom", severity="SEV3", service_id=None, integration_type="custom")


def interleave(monkeypatch: pytest.MonkeyPatch, between: Any) -> list[bool]:
    """Run `between` (another writer) after the next write read the list and before it saves."""
    original = service.save_if
    outcomes: list[bool] = []

    def save_after_a_rival(record: Any, condition: Any = None) -> bool:
        if not outcomes:
            outcomes.append(True)
            between()
        saved = original(record, condition)
        outcomes.append(saved)
        return saved

    monkeypatch.setattr(service, "save_if", save_after_a_rival)
    return outcomes


def note_rule(org: Org, note: str, **kwargs: Any) -> str:
    placed = service.create_rule(
        organization_id=org.organization_id, now=NOW, conditions=[], actions=Actions(note=note), **kwargs
    )
    return placed.rule.rule_id


def test_a_create_that_loses_the_race_keeps_both_rules(org: Org, monkeypatch: pytest.MonkeyPatch) -> None:
    rival: list[str] = []
    outcomes = interleave(monkeypatch, lambda: rival.append(note_rule(org, "rival")))
    mine = note_rule(org, "mine")
    # The rival's save succeeded; mine failed on the version, re-read, and landed after it.
    assert outcomes == [True, True, False, True]
    assert [r.rule_id for r in service.list_rules(organization_id=org.organization_id)] == [rival[0], mine]


def test_the_first_write_of_a_list_races_too(org: Org, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both writers find no item: the version condition lets only one create it."""
    rival: list[str] = []
    interleave(monkeypatch, lambda: rival.append(note_rule(org, "rival", integration_id="int_1")))
    mine = note_rule(org, "mine", integration_id="int_1")
    listed = service.list_rules(organization_id=org.organization_id, integration_id="int_1")
    assert [r.rule_id for r in listed] == [rival[0], mine]


def test_an_update_that_loses_the_race_reapplies(org: Org, monkeypatch: pytest.MonkeyPatch) -> None:
    first = note_rule(org, "a")
    second = note_rule(org, "b")

    def rival() -> None:
        service.update_rule(organization_id=org.organization_id, rule_id=second, now=NOW, description="rival's")

    interleave(monkeypatch, rival)
    moved = service.update_rule(organization_id=org.organization_id, rule_id=first, now=NOW, position=1)
    assert moved.position == 1
    listed = service.list_rules(organization_id=org.organization_id)
    assert [(r.rule_id, r.description, r.version) for r in listed] == [(second, "rival's", 2), (first, None, 2)]


def test_a_delete_racing_an_update_of_the_same_rule(org: Org, monkeypatch: pytest.MonkeyPatch) -> None:
    rule_id = note_rule(org, "a")
    interleave(monkeypatch, lambda: service.delete_rule(organization_id=org.organization_id, rule_id=rule_id, now=NOW))
    with pytest.raises(NotFound):
        service.update_rule(organization_id=org.organization_id, rule_id=rule_id, now=NOW, description="late")
    assert service.list_rules(organization_id=org.organization_id) == []


def test_the_list_is_one_versioned_item(org: Org) -> None:
    note_rule(org, "a")
    note_rule(org, "b")
    record = EventRuleSetRecord.get(org.organization_id, list_key(None), consistent_read=True)
    assert record.version == 2


def test_the_stored_size_is_capped(org: Org) -> None:
    long_pattern = "x" * 256
    conditions = [("title", "equals", long_pattern)] * 16
    created = 0
    with pytest.raises(Conflict, match="storage limit"):
        for _ in range(100):
            service.create_rule(
                organization_id=org.organization_id,
                now=NOW,
                conditions=conditions,
                actions=Actions(note="n" * 1000),
                description="d" * 1000,
            )
            created += 1
    assert 0 < created < 100
    assert len(service.list_rules(organization_id=org.organization_id)) == created


def test_decide_with_and_without_an_integration(org: Org) -> None:
    assert decide(organization_id=org.organization_id, integration_id=None, facts=FACTS) == RuleDecision()
    assert decide(organization_id=org.organization_id, integration_id="int_1", facts=FACTS) == RuleDecision()
    o = note_rule(org, "org")
    i = note_rule(org, "int", integration_id="int_1")
    assert decide(organization_id=org.organization_id, integration_id="int_1", facts=FACTS) == RuleDecision(
        notes=("int", "org"), matched_rule_ids=(i, o)
    )
    assert decide(organization_id=org.organization_id, integration_id="int_2", facts=FACTS) == RuleDecision(
        notes=("org",), matched_rule_ids=(o,)
    )


def test_decide_makes_one_batch_read_and_no_query(org: Org) -> None:
    """The per-event path: both lists in one BatchGetItem, nothing else (moto walks a whole table
    for any Query, and a Query has no place on a per-event path)."""
    from tests.service.test_message_reads import Requests

    note_rule(org, "org")
    note_rule(org, "int", integration_id="int_1")
    seen = Requests()
    seen.install()
    try:
        for integration_id in ("int_1", None):
            decide(organization_id=org.organization_id, integration_id=integration_id, facts=FACTS)
    finally:
        seen.uninstall()
    assert dict(seen.seen) == {("BatchGetItem", "event-rule-sets"): 2}
