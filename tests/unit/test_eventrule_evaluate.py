"""eventrule.evaluate as tables: every op, missing fields, case, patterns, continue, drop, both lists."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.eventrule.evaluate import condition_holds, evaluate, field_value
from chalicelib.eventrule.facts import AlertFacts, RuleDecision
from chalicelib.eventrule.rules import Actions, Condition, Rule

CREATED = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
FACTS = AlertFacts(
    title="Disk full on db-1 (/var)",
    source="alertmanager",
    severity="SEV2",
    service_id="SER-00001",
    integration_type="alertmanager",
    labels={"env": "Prod", "team": "storage", "empty": ""},
)
BARE = AlertFacts(title="ping", source="custom", severity=None, service_id=None, integration_type="custom")


def rule(rule_id: str, *conditions: Condition, continues: bool = False, **actions: object) -> Rule:
    return Rule(
        rule_id=rule_id,
        conditions=tuple(conditions),
        actions=Actions(**actions),  # type: ignore[arg-type]
        continues=continues,
        description=None,
        version=1,
        created_at=CREATED,
    )


def when(field: str, op: str, value: str | None = None) -> Condition:
    return Condition(field, op, value)


@pytest.mark.parametrize(
    ("field", "op", "value", "facts", "holds"),
    [
        # equals: whole value, case ignored
        ("title", "equals", "Disk full on db-1 (/var)", FACTS, True),
        ("title", "equals", "disk FULL on DB-1 (/var)", FACTS, True),
        ("title", "equals", "Disk full", FACTS, False),
        ("source", "equals", "alertmanager", FACTS, True),
        ("severity", "equals", "sev2", FACTS, True),
        ("severity", "equals", "SEV1", FACTS, False),
        ("service_id", "equals", "SER-00001", FACTS, True),
        ("integration_type", "equals", "ALERTMANAGER", FACTS, True),
        ("labels.env", "equals", "prod", FACTS, True),
        ("labels.env", "equals", "production", FACTS, False),
        # contains: substring, case ignored
        ("title", "contains", "DISK FULL", FACTS, True),
        ("title", "contains", "(/var)", FACTS, True),
        ("title", "contains", "memory", FACTS, False),
        ("labels.team", "contains", "stor", FACTS, True),
        # matches: RE2, found anywhere, case-sensitive unless (?i)
        ("title", "matches", r"db-\d+", FACTS, True),
        ("title", "matches", r"^Disk", FACTS, True),
        ("title", "matches", r"^disk", FACTS, False),
        ("title", "matches", r"(?i)^disk", FACTS, True),
        ("title", "matches", r"^db-1$", FACTS, False),
        ("title", "matches", r"\(/var\)$", FACTS, True),
        ("labels.env", "matches", r"^(Prod|Staging)$", FACTS, True),
        ("service_id", "matches", r"^SER-0000[12]$", FACTS, True),
        # exists: a non-empty value
        ("severity", "exists", None, FACTS, True),
        ("service_id", "exists", None, FACTS, True),
        ("labels.env", "exists", None, FACTS, True),
        ("labels.empty", "exists", None, FACTS, False),
        ("labels.missing", "exists", None, FACTS, False),
        ("severity", "exists", None, BARE, False),
        ("service_id", "exists", None, BARE, False),
        # a field the alert lacks fails every other op
        ("severity", "equals", "SEV3", BARE, False),
        ("service_id", "contains", "SER", BARE, False),
        ("labels.env", "matches", ".*", BARE, False),
        ("labels.env", "equals", "prod", BARE, False),
        # a stored pattern that no longer compiles matches nothing, never raises
        ("title", "matches", "(a", FACTS, False),
        # an op this code does not know matches nothing
        ("title", "starts_with", "Disk", FACTS, False),
    ],
)
def test_condition(field: str, op: str, value: str | None, facts: AlertFacts, holds: bool) -> None:
    assert condition_holds(Condition(field, op, value), facts) is holds


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("title", FACTS.title),
        ("labels.env", "Prod"),
        ("labels.nope", None),
        ("labels", None),  # not a field of the facts that conditions read
        ("nonsense", None),
    ],
)
def test_field_value(field: str, expected: str | None) -> None:
    assert field_value(FACTS, field) == expected


DISK = when("title", "contains", "disk")
PROD = when("labels.env", "equals", "prod")
STAGING = when("labels.env", "equals", "staging")
NEVER = when("title", "equals", "no such title")


@pytest.mark.parametrize(
    ("name", "rule_sets", "expected"),
    [
        ("nothing to evaluate", [], RuleDecision()),
        ("empty lists", [[], []], RuleDecision()),
        ("no rule matches", [[rule("a", NEVER, suppress=True)]], RuleDecision()),
        (
            "an empty condition list matches every alert",
            [[rule("a", note="catch-all")]],
            RuleDecision(notes=("catch-all",), matched_rule_ids=("a",)),
        ),
        (
            "all conditions must hold",
            [[rule("a", DISK, STAGING, suppress=True), rule("b", DISK, PROD, severity="SEV1")]],
            RuleDecision(severity="SEV1", matched_rule_ids=("b",)),
        ),
        (
            "the first match wins within a list",
            [[rule("a", DISK, severity="SEV1"), rule("b", PROD, suppress=True, severity="SEV4")]],
            RuleDecision(severity="SEV1", matched_rule_ids=("a",)),
        ),
        (
            "continue goes on to the next rules of the list",
            [[rule("a", DISK, continues=True, note="one"), rule("b", NEVER, note="no"), rule("c", PROD, note="two")]],
            RuleDecision(notes=("one", "two"), matched_rule_ids=("a", "c")),
        ),
        (
            "after continue, a rule without continue stops the list",
            [
                [
                    rule("a", DISK, continues=True, suppress=True),
                    rule("b", PROD, note="stop"),
                    rule("c", note="never reached"),
                ]
            ],
            RuleDecision(suppressed=True, notes=("stop",), matched_rule_ids=("a", "b")),
        ),
        (
            "the first decided severity and route win over later continue rules",
            [
                [
                    rule("a", DISK, continues=True, severity="SEV1", route_to_service="SER-00002"),
                    rule("b", PROD, severity="SEV4", route_to_service="SER-00003", note="later"),
                ]
            ],
            RuleDecision(severity="SEV1", route_to_service="SER-00002", notes=("later",), matched_rule_ids=("a", "b")),
        ),
        (
            "a later rule decides what an earlier one left open",
            [[rule("a", DISK, continues=True, note="n"), rule("b", PROD, severity="SEV0")]],
            RuleDecision(severity="SEV0", notes=("n",), matched_rule_ids=("a", "b")),
        ),
        (
            "suppress is sticky",
            [[rule("a", DISK, continues=True, suppress=True), rule("b", PROD, note="x")], [rule("c", note="org")]],
            RuleDecision(suppressed=True, notes=("x", "org"), matched_rule_ids=("a", "b", "c")),
        ),
        (
            "both lists run: the integration's win does not skip the organization's",
            [[rule("i1", DISK, severity="SEV1")], [rule("o1", PROD, route_to_service="SER-00009", severity="SEV4")]],
            RuleDecision(severity="SEV1", route_to_service="SER-00009", matched_rule_ids=("i1", "o1")),
        ),
        (
            "the integration's list runs first, so its severity beats the organization's",
            [[rule("i1", severity="SEV2")], [rule("o1", severity="SEV0")]],
            RuleDecision(severity="SEV2", matched_rule_ids=("i1", "o1")),
        ),
        (
            "drop ends all evaluation, across lists",
            [[rule("i1", DISK, continues=True, note="seen"), rule("i2", PROD, drop=True)], [rule("o1", suppress=True)]],
            RuleDecision(dropped=True, notes=("seen",), matched_rule_ids=("i1", "i2")),
        ),
        (
            "drop in the organization's list after the integration's decisions",
            [[rule("i1", severity="SEV1")], [rule("o1", NEVER, suppress=True), rule("o2", DISK, drop=True)]],
            RuleDecision(dropped=True, severity="SEV1", matched_rule_ids=("i1", "o2")),
        ),
        (
            "a drop rule that does not match drops nothing",
            [[rule("a", STAGING, drop=True), rule("b", DISK, suppress=True)]],
            RuleDecision(suppressed=True, matched_rule_ids=("b",)),
        ),
        (
            "regex conditions in a rule",
            [[rule("a", when("title", "matches", r"db-[0-9]+ \(/var\)$"), route_to_service="SER-00042")]],
            RuleDecision(route_to_service="SER-00042", matched_rule_ids=("a",)),
        ),
        (
            "a rule on a missing label never matches",
            [[rule("a", when("labels.region", "equals", "eu"), drop=True)]],
            RuleDecision(),
        ),
        (
            "exists on a missing label is simply false",
            [
                [
                    rule("a", when("labels.region", "exists"), drop=True),
                    rule("b", when("labels.team", "exists"), note="t"),
                ]
            ],
            RuleDecision(notes=("t",), matched_rule_ids=("b",)),
        ),
    ],
)
def test_evaluate(name: str, rule_sets: list[list[Rule]], expected: RuleDecision) -> None:
    assert evaluate(rule_sets, FACTS) == expected, name


def test_evaluate_is_pure_and_repeatable() -> None:
    rule_sets = [[rule("a", DISK, continues=True, note="n")], [rule("b", suppress=True)]]
    first = evaluate(rule_sets, FACTS)
    assert evaluate(rule_sets, FACTS) == first
    assert rule_sets == [[rule("a", DISK, continues=True, note="n")], [rule("b", suppress=True)]]


@pytest.mark.timeout(30)  # a hang guard, not a figure: a backtracking engine would never finish
def test_a_catastrophic_pattern_finishes_on_a_long_title() -> None:
    """`(a+)+$` against 5,000 a's and a '!' backtracks for longer than the universe in Python's re."""
    facts = AlertFacts(title="a" * 5000 + "!", source="custom", severity=None, service_id=None, integration_type="x")
    assert evaluate([[rule("a", when("title", "matches", "(a+)+$"), drop=True)]], facts) == RuleDecision()
    assert evaluate([[rule("a", when("title", "matches", "(a+)+!$"), drop=True)]], facts).dropped


# --- issue 26: a service is named by its id or its key ---------------------------------------------------

KEYED = AlertFacts(
    title="x",
    source="custom",
    severity=None,
    service_id="SER-00003",
    integration_type="custom",
    service_key="svc_search0001",
)


@pytest.mark.parametrize(
    ("op", "value", "holds"),
    [
        ("equals", "SER-00003", True),
        ("equals", "ser-00003", True),
        ("equals", "svc_search0001", True),
        ("equals", "SVC_SEARCH0001", True),
        ("equals", "svc_other00001", False),
        ("equals", "SER-00004", False),
        ("contains", "SER-000", True),  # contains and matches read the id
        ("contains", "svc_", False),
        ("matches", "^SER-0000[0-9]$", True),
        ("exists", None, True),
    ],
)
def test_service_id_equals_either_identifier(op, value, holds):
    assert condition_holds(when("service_id", op, value), KEYED) is holds


def test_service_key_without_a_key_in_the_facts():
    assert condition_holds(when("service_id", "equals", "svc_search0001"), FACTS) is False
