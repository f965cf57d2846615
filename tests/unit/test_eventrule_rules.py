"""The checks a rule passes before it is stored (each a 400 naming the field), the RE2 guard, and
the stored form's round trip."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.errors import ValidationFailed
from chalicelib.eventrule.regex import MAX_PATTERN_LENGTH, PatternRefused, check_pattern, pattern_matches
from chalicelib.eventrule.rules import (
    MAX_CONDITIONS,
    MAX_NOTE_LENGTH,
    MAX_VALUE_LENGTH,
    Actions,
    Condition,
    Rule,
    check_actions,
    check_condition,
    check_conditions,
    check_description,
    rule_from_item,
    rule_to_item,
)


def refused_field(error: pytest.ExceptionInfo[ValidationFailed]) -> str:
    fields = error.value.details["fields"]
    assert len(fields) == 1
    return str(fields[0]["field"])


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("(a", "missing )"),
        ("a)", "unexpected )"),
        ("[z-a]", "invalid character class range"),
        (r"(?<=x)a", "not a valid RE2 regular expression"),  # lookbehind: RE2 has none
        (r"(?=x)", "invalid perl operator"),  # lookahead
        (r"(a)\1", "invalid escape sequence"),  # backreference
        ("a{1001}", "invalid repetition size"),
        ("x" * (MAX_PATTERN_LENGTH + 1), f"at most {MAX_PATTERN_LENGTH} characters"),
    ],
)
def test_patterns_refused(pattern: str, problem: str) -> None:
    with pytest.raises(PatternRefused, match=problem.replace("(", r"\(").replace(")", r"\)")):
        check_pattern(pattern)


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        ("(a+)+$", "a" * 3000 + "b", False),  # catastrophic for a backtracking engine; linear in RE2
        ("(x+x+)+y", "x" * 3000, False),
        ("(.*a){20}", "a" * 200, True),
        (r"^\w+-\d+$", "db-12", True),
        ("(?i)ERROR", "an error", True),
        ("ERROR", "an error", False),
        ("é", "café", True),  # Unicode text
        ("x" * MAX_PATTERN_LENGTH, "x" * MAX_PATTERN_LENGTH, True),  # the longest pattern allowed
        ("(a", "(a", False),  # an invalid stored pattern matches nothing
    ],
)
def test_pattern_matches(pattern: str, text: str, found: bool) -> None:
    assert pattern_matches(pattern, text) is found


@pytest.mark.parametrize(
    ("field", "op", "value", "expected"),
    [
        ("title", "equals", "x", Condition("title", "equals", "x")),
        ("source", "contains", "x", Condition("source", "contains", "x")),
        ("severity", "matches", "^SEV[01]$", Condition("severity", "matches", "^SEV[01]$")),
        ("service_id", "exists", None, Condition("service_id", "exists", None)),
        ("integration_type", "equals", "sentry", Condition("integration_type", "equals", "sentry")),
        ("labels.env", "equals", "prod", Condition("labels.env", "equals", "prod")),
        ("labels.kubernetes.io/name", "exists", None, Condition("labels.kubernetes.io/name", "exists", None)),
        ("labels.a:b@c-d_e", "contains", "v", Condition("labels.a:b@c-d_e", "contains", "v")),
        ("title", "equals", "x" * MAX_VALUE_LENGTH, Condition("title", "equals", "x" * MAX_VALUE_LENGTH)),
    ],
)
def test_conditions_accepted(field: str, op: str, value: str | None, expected: Condition) -> None:
    assert check_condition(field, op, value, where="conditions.0") == expected


@pytest.mark.parametrize(
    ("field", "op", "value", "refused", "problem"),
    [
        ("Title", "equals", "x", "conditions.3.field", "must be one of"),  # fields are lowercase
        ("status", "equals", "x", "conditions.3.field", "must be one of"),
        ("labels.", "equals", "x", "conditions.3.field", "must be one of"),
        ("labels", "exists", None, "conditions.3.field", "must be one of"),
        ("labels.has space", "exists", None, "conditions.3.field", "must be one of"),
        ("labels." + "x" * 129, "exists", None, "conditions.3.field", "must be one of"),
        ("title", "startswith", "x", "conditions.3.op", "must be one of"),
        ("title", "equals", None, "conditions.3.value", "is required when op is equals"),
        ("title", "contains", "", "conditions.3.value", "is required when op is contains"),
        ("title", "matches", None, "conditions.3.value", "is required when op is matches"),
        ("title", "exists", "x", "conditions.3.value", "must be left out when op is exists"),
        ("title", "exists", "", "conditions.3.value", "must be left out when op is exists"),
        ("title", "equals", "x" * (MAX_VALUE_LENGTH + 1), "conditions.3.value", "at most"),
        ("title", "matches", "(a", "conditions.3.value", "not a valid RE2 regular expression: missing )"),
        ("title", "matches", r"(?!x)", "conditions.3.value", "not a valid RE2 regular expression"),
    ],
)
def test_conditions_refused(field: str, op: str, value: str | None, refused: str, problem: str) -> None:
    with pytest.raises(ValidationFailed) as error:
        check_condition(field, op, value, where="conditions.3")
    assert refused_field(error) == refused
    assert problem in error.value.details["fields"][0]["message"]


def test_condition_count_is_capped_and_places_are_named() -> None:
    assert check_conditions([]) == ()
    assert len(check_conditions([("title", "exists", None)] * MAX_CONDITIONS)) == MAX_CONDITIONS
    with pytest.raises(ValidationFailed) as error:
        check_conditions([("title", "exists", None)] * (MAX_CONDITIONS + 1))
    assert refused_field(error) == "conditions"
    with pytest.raises(ValidationFailed) as error:
        check_conditions([("title", "exists", None), ("title", "matches", "(")])
    assert refused_field(error) == "conditions.1.value"


@pytest.mark.parametrize(
    "actions",
    [
        Actions(suppress=True),
        Actions(drop=True),
        Actions(severity="SEV1"),
        Actions(route_to_service="SER-00001"),
        Actions(note="look at the runbook"),
        Actions(suppress=True, severity="SEV4", route_to_service="svc_abcdefghij", note="n"),
    ],
)
def test_actions_accepted(actions: Actions) -> None:
    assert check_actions(actions) == actions


@pytest.mark.parametrize(
    ("actions", "refused", "problem"),
    [
        (Actions(), "actions", "at least one action"),
        (Actions(suppress=False, drop=False, note=""), "actions", "at least one action"),
        (Actions(drop=True, suppress=True), "actions.drop", "drop takes no other action"),
        (Actions(drop=True, note="why"), "actions.drop", "drop takes no other action"),
        (Actions(drop=True, severity="SEV1"), "actions.drop", "drop takes no other action"),
        (Actions(note="x" * (MAX_NOTE_LENGTH + 1)), "actions.note", "at most"),
    ],
)
def test_actions_refused(actions: Actions, refused: str, problem: str) -> None:
    with pytest.raises(ValidationFailed) as error:
        check_actions(actions)
    assert refused_field(error) == refused
    assert problem in error.value.details["fields"][0]["message"]


def test_description() -> None:
    assert check_description(None) is None
    assert check_description("  ") is None
    assert check_description(" Storm guard ") == "Storm guard"
    with pytest.raises(ValidationFailed):
        check_description("x" * 1001)


@pytest.mark.parametrize("updated_at", [None, datetime(2026, 11, 23, 8, 0, tzinfo=UTC)])
def test_stored_form_round_trip(updated_at: datetime | None) -> None:
    rule = Rule(
        rule_id="evr_" + "0" * 32,
        conditions=(Condition("labels.env", "equals", "prod"), Condition("severity", "exists")),
        actions=Actions(
            suppress=True, severity="SEV2", route_to_service="SER-00002", route_to_service_key="svc_abc", note="n"
        ),
        continues=True,
        description="d",
        version=3,
        created_at=datetime(2026, 11, 22, 12, 0, tzinfo=UTC),
        updated_at=updated_at,
    )
    assert rule_from_item(rule_to_item(rule)) == rule
