"""What event rules may cost: each pattern's RE2 program, each list's `matches` conditions in all
(a 400 naming the condition that crosses), and the time budget at evaluation, driven by a fake
monotonic clock (never a sleep): past it, the decision of no rule with a warning."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from chalicelib.errors import ValidationFailed
from chalicelib.eventrule.evaluate import EVALUATION_BUDGET_SECONDS, evaluate
from chalicelib.eventrule.facts import AlertFacts, RuleDecision
from chalicelib.eventrule.regex import MAX_PROGRAM_SIZE, PatternRefused, check_pattern, program_size
from chalicelib.eventrule.rules import (
    MAX_INSTRUCTIONS_PER_LIST,
    MAX_MATCHES_PER_LIST,
    Actions,
    Condition,
    RegexCost,
    Rule,
    check_condition,
    check_regex_budget,
    regex_cost,
)

CREATED = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
FACTS = AlertFacts(
    title="Disk full on db-1",
    source="custom",
    severity="SEV2",
    service_id="SER-00001",
    integration_type="custom",
    labels={"env": "prod"},
)
HEAVY = r"(?:.{1,50}){1,5}Z"  # 2,254 instructions: 26 ms on a 1,000-character label in RE2's slow mode


def rule(rule_id: str, *conditions: Condition, continues: bool = True, **actions: object) -> Rule:
    return Rule(
        rule_id=rule_id,
        conditions=tuple(conditions),
        actions=Actions(**actions),  # type: ignore[arg-type]
        continues=continues,
        description=None,
        version=1,
        created_at=CREATED,
    )


def matches(pattern: str, field: str = "title") -> Condition:
    return Condition(field, "matches", pattern)


@pytest.mark.parametrize(
    ("pattern", "allowed"),
    [
        (r"^db-[0-9]+$", True),
        (r"(?i)(timeout|timed out|deadline exceeded)", True),
        (r"^(prod|staging)-[a-z0-9-]{1,63}\.example\.com$", True),  # a hostname: about 280
        (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", True),
        (HEAVY, False),
        (r".{0,240}Z", False),
        (r"(?:(?:.)?){200}Q", False),
    ],
)
def test_a_pattern_costs_at_most_its_program_budget(pattern: str, allowed: bool) -> None:
    assert (program_size(pattern) <= MAX_PROGRAM_SIZE) is allowed
    if allowed:
        check_pattern(pattern)
        assert check_condition("title", "matches", pattern, where="conditions.0").value == pattern
        return
    with pytest.raises(PatternRefused, match="too costly to run on every event"):
        check_pattern(pattern)
    with pytest.raises(ValidationFailed) as refused:
        check_condition("labels.x", "matches", pattern, where="conditions.3")
    assert refused.value.details["fields"][0]["field"] == "conditions.3.value"


def test_what_conditions_cost() -> None:
    rules = [
        rule("a", matches("^db-[0-9]+$"), Condition("title", "contains", "disk")),
        rule("b", Condition("title", "exists"), matches(r"(?i)\berror\b", "labels.env")),
        rule("c", matches("(unclosed")),  # stored before a rule change: never runs, costs nothing
    ]
    cost = regex_cost(rules)
    assert cost == RegexCost(3, program_size("^db-[0-9]+$") + program_size(r"(?i)\berror\b"))
    assert RegexCost(2, 10).exceeds(RegexCost(1, 50)) and RegexCost(1, 60).exceeds(RegexCost(1, 50))
    assert not RegexCost(1, 50).exceeds(RegexCost(1, 50))


def refused_field(call: Callable[[], None]) -> str:
    with pytest.raises(ValidationFailed) as refused:
        call()
    [problem] = refused.value.details["fields"]
    return str(problem["field"])


def test_a_list_holds_at_most_its_matches_conditions() -> None:
    full = [rule(f"r{n}", matches(f"^x{n}$"), matches(f"^y{n}$")) for n in range(MAX_MATCHES_PER_LIST // 2)]
    assert regex_cost(full).patterns == MAX_MATCHES_PER_LIST
    check_regex_budget(full[:-1], full[-1].conditions)  # the last rule fits exactly
    written = (Condition("title", "contains", "x"), matches("^z$"))
    assert refused_field(lambda: check_regex_budget(full, written)) == "conditions.1.value"
    check_regex_budget(full, (Condition("title", "contains", "x"), Condition("labels.env", "equals", "prod")))


def test_a_list_holds_at_most_its_instructions() -> None:
    big = r"^(prod|staging)-[a-z0-9-]{1,63}\.example\.com$"
    size = program_size(big)
    room = MAX_INSTRUCTIONS_PER_LIST // size
    others = [rule(f"r{n}", matches(big)) for n in range(room)]
    assert regex_cost(others).instructions <= MAX_INSTRUCTIONS_PER_LIST
    written = (matches("^a$"), Condition("title", "exists"), matches(big))
    with pytest.raises(ValidationFailed) as refused:
        check_regex_budget(others, written)
    [problem] = refused.value.details["fields"]
    message = str(problem["message"])
    assert problem["field"] == "conditions.2.value"
    assert f"{MAX_INSTRUCTIONS_PER_LIST} instructions" in message and str(size) in message


# --- the time budget at evaluation ------------------------------------------------------------------


class FakeClock:
    """A monotonic clock that moves `step` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now, self.step, self.reads = 100.0, step, 0

    def __call__(self) -> float:
        self.reads += 1
        self.now += self.step
        return self.now


def heavy_lists() -> list[list[Rule]]:
    """Integration list: suppress and note, then a drop further on; every condition holds."""
    conditions = [Condition("title", "contains", "disk")] * 4
    return [
        [rule("suppress", *conditions, suppress=True, note="early"), rule("drop", *conditions, drop=True)],
        [rule("org", *conditions, severity="SEV0")],
    ]


def test_within_the_budget_the_rules_decide() -> None:
    clock = FakeClock(step=0.01)  # 13 reads: 0.13 s in all
    decided = evaluate(heavy_lists(), FACTS, clock=clock)
    assert decided.dropped and decided.matched_rule_ids == ("suppress", "drop") and decided.warnings == ()
    assert clock.reads == 1 + 8  # the start, then once before each condition that ran


def test_past_the_budget_no_rule_applies_and_a_warning_says_so() -> None:
    clock = FakeClock(step=0.3)  # past 1 s at the fourth condition: a suppress had matched, a drop not yet
    decided = evaluate(heavy_lists(), FACTS, clock=clock)
    assert decided == RuleDecision(warnings=(decided.warnings[0],))
    assert not decided.suppressed and not decided.dropped and decided.notes == () and decided.severity is None
    assert "took longer than 1 s" in decided.warnings[0] and "kept and paged" in decided.warnings[0]
    assert clock.reads == 5  # stopped at once: nothing more ran
    assert EVALUATION_BUDGET_SECONDS == 1.0


def test_the_budget_is_the_callers_to_set() -> None:
    assert evaluate(heavy_lists(), FACTS, clock=FakeClock(step=0.3), budget_seconds=10.0).dropped
    tight = evaluate(heavy_lists(), FACTS, clock=FakeClock(step=0.001), budget_seconds=0.0)
    assert tight.matched_rule_ids == () and "took longer than 0 s" in tight.warnings[0]
    assert evaluate([[rule("empty", suppress=True)]], FACTS, clock=FakeClock(step=5.0)).suppressed  # no condition
