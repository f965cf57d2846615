"""Escalation policies as data: validation (details.fields) and to_dict/from_dict round trips."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from chalicelib.errors import ValidationFailed
from chalicelib.escalation import EscalationPolicy, EscalationState, Level, Target, start, validate_policy
from chalicelib.escalation.steps import MAX_LEVELS, MAX_TARGETS
from chalicelib.settings import get_settings

POLICY = EscalationPolicy(
    "pol_1",
    "Payments",
    (
        Level((Target("schedule", "sch_primary"),), 5),
        Level((Target("user", "usr_lead"), Target("schedule", "sch_secondary")), 30),
    ),
    repeat_count=2,
)


def policy(**changes: Any) -> EscalationPolicy:
    values: dict[str, Any] = {
        "policy_id": POLICY.policy_id,
        "name": POLICY.name,
        "levels": POLICY.levels,
        "repeat_count": POLICY.repeat_count,
    }
    values.update(changes)
    return EscalationPolicy(**values)


def level(delay: Any = 5, *targets: Target) -> Level:
    return Level(targets or (Target("user", "usr_a"),), delay)


def invalid_fields(candidate: EscalationPolicy) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as caught:
        validate_policy(candidate)
    assert caught.value.code == "VALIDATION_ERROR" and caught.value.details is not None
    return {item["field"]: item["message"] for item in caught.value.details["fields"]}


def test_a_sensible_policy_is_valid_and_hashable():
    validate_policy(POLICY)
    validate_policy(policy(levels=(level(1),), repeat_count=0))
    validate_policy(policy(levels=(level(1440),), repeat_count=9))
    assert hash(POLICY) == hash(EscalationPolicy.from_dict(POLICY.to_dict()))
    assert isinstance(Level([Target("user", "u")], 5).targets, tuple)  # type: ignore[arg-type]
    assert isinstance(EscalationPolicy("p", "P", [level()]).levels, tuple)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("candidate", "field"),
    [
        (policy(policy_id=""), "policy_id"),
        (policy(name="  "), "name"),
        (policy(name="n" * 101), "name"),
        (policy(levels=()), "levels"),
        (policy(levels=tuple(level() for _ in range(MAX_LEVELS + 1))), "levels"),
        (policy(levels=(Level((), 5),)), "levels.0.targets"),
        (policy(levels=(level(5, *(Target("user", f"u{i}") for i in range(MAX_TARGETS + 1))),)), "levels.0.targets"),
        (policy(levels=(level(5), level(5, Target("team", "t")))), "levels.1.targets.0.kind"),  # type: ignore[arg-type]
        (policy(levels=(level(5, Target("user", "")),)), "levels.0.targets.0.id"),
        (policy(levels=(level(0),)), "levels.0.delay_minutes"),
        (policy(levels=(level(1441),)), "levels.0.delay_minutes"),
        (policy(levels=(level(True),)), "levels.0.delay_minutes"),
        (policy(levels=(level(5.5),)), "levels.0.delay_minutes"),
        (policy(repeat_count=-1), "repeat_count"),
        (policy(repeat_count=10), "repeat_count"),
        (policy(repeat_count=False), "repeat_count"),
    ],
)
def test_validation_names_the_field(candidate, field):
    assert field in invalid_fields(candidate)


def test_every_problem_is_listed():
    fields = invalid_fields(policy(name="", levels=(Level((), 0), level(5, Target("user", ""))), repeat_count=12))
    assert {"name", "levels.0.targets", "levels.0.delay_minutes", "levels.1.targets.0.id", "repeat_count"} <= set(
        fields
    )


def test_policy_round_trip_through_json():
    data = json.loads(json.dumps(POLICY.to_dict()))
    assert data == {
        "policy_id": "pol_1",
        "name": "Payments",
        "levels": [
            {"targets": [{"kind": "schedule", "id": "sch_primary"}], "delay_minutes": 5},
            {
                "targets": [{"kind": "user", "id": "usr_lead"}, {"kind": "schedule", "id": "sch_secondary"}],
                "delay_minutes": 30,
            },
        ],
        "repeat_count": 2,
    }
    assert EscalationPolicy.from_dict(data) == POLICY


def test_from_dict_accepts_dynamodb_numbers_and_a_missing_repeat_count():
    data = POLICY.to_dict()
    data["levels"][0]["delay_minutes"] = Decimal("5")
    data["repeat_count"] = Decimal("2")
    assert EscalationPolicy.from_dict(data) == POLICY
    del data["repeat_count"]
    assert EscalationPolicy.from_dict(data).repeat_count == 0


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.pop("policy_id"), "policy_id"),
        (lambda d: d.update(levels={}), "levels"),
        (lambda d: d["levels"].append(7), "levels.2"),
        (lambda d: d["levels"][0].update(delay_minutes="5"), "levels.0.delay_minutes"),
        (lambda d: d["levels"][0].update(targets=None), "levels.0.targets"),
        (lambda d: d["levels"][1]["targets"][1].pop("id"), "levels.1.targets.1.id"),
        (lambda d: d["levels"][1]["targets"].append("usr"), "levels.1.targets.2"),
        (lambda d: d.update(repeat_count=Decimal("1.5")), "repeat_count"),
    ],
)
def test_from_dict_reports_the_field_with_the_wrong_shape(mutate, field):
    data = json.loads(json.dumps(POLICY.to_dict()))
    mutate(data)
    with pytest.raises(ValidationFailed) as caught:
        EscalationPolicy.from_dict(data)
    assert caught.value.details is not None
    assert field in {item["field"] for item in caught.value.details["fields"]}


def test_state_round_trip_through_json():
    now = datetime(2026, 11, 22, 12, 0, 0, 123456, tzinfo=UTC)
    state, _ = start(POLICY, now, "tok", settings=get_settings())
    data = json.loads(json.dumps(state.to_dict()))
    assert data["next_at"] == "2026-11-22T12:05:00.123456Z"
    assert data["level_index"] == 0 and data["sequence"] == 1 and data["stopped"] is False
    assert EscalationState.from_dict(data) == state
    data["next_at"] = None
    data["stopped"] = True
    assert EscalationState.from_dict(data).next_at is None


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.update(level_index=2), "level_index"),
        (lambda d: d.update(level_index=-1), "level_index"),
        (lambda d: d.update(stopped="no"), "stopped"),
        (lambda d: d.update(token=None), "token"),
        (lambda d: d.update(next_at="soon"), "next_at"),
        (lambda d: d.update(policy=None), "policy"),
        (lambda d: d["policy"].update(name=3), "policy.name"),
    ],
)
def test_state_from_dict_reports_problems(mutate, field):
    state, _ = start(POLICY, datetime(2026, 1, 1, tzinfo=UTC), "tok", settings=get_settings())
    data = state.to_dict()
    mutate(data)
    with pytest.raises(ValidationFailed) as caught:
        EscalationState.from_dict(data)
    assert caught.value.details is not None
    assert field in {item["field"] for item in caught.value.details["fields"]}
