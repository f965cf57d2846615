"""SLA targets, completeness, updates and the due-time arithmetic."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.errors import ConfigurationError, ValidationFailed
from chalicelib.incident import sla
from chalicelib.incident.sla import (
    DEFAULT_SLA_SETTINGS,
    MAX_SLA_MINUTES,
    SlaSettings,
    SlaTarget,
    acknowledge_due_at,
    apply_sla_update,
    evaluate,
    require_complete,
    resolve_due_at,
    validate_sla_update,
)
from chalicelib.settings import get_settings
from chalicelib.severity import SEVERITIES

T0 = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


def test_defaults_cover_every_severity_and_are_valid():
    assert tuple(DEFAULT_SLA_SETTINGS.per_severity) == SEVERITIES
    assert DEFAULT_SLA_SETTINGS.per_severity["SEV0"] == SlaTarget(5, 60)
    assert DEFAULT_SLA_SETTINGS.per_severity["SEV4"] == SlaTarget(1440, 10080)
    validate_sla_update(DEFAULT_SLA_SETTINGS)
    for severity in SEVERITIES:
        assert require_complete(DEFAULT_SLA_SETTINGS, severity).is_complete


def test_round_trip_through_json():
    data = json.loads(json.dumps(DEFAULT_SLA_SETTINGS.to_dict()))
    assert list(data["per_severity"]) == list(SEVERITIES)
    assert data["per_severity"]["SEV1"] == {"acknowledge_within_minutes": 15, "resolve_within_minutes": 240}
    assert SlaSettings.from_dict(data) == DEFAULT_SLA_SETTINGS
    assert hash(SlaSettings.from_dict(data)) == hash(DEFAULT_SLA_SETTINGS)


def test_from_dict_accepts_dynamodb_numbers_and_nulls():
    settings = SlaSettings.from_dict(
        {"per_severity": {"SEV2": {"acknowledge_within_minutes": Decimal("30"), "resolve_within_minutes": None}}}
    )
    assert settings.per_severity["SEV2"] == SlaTarget(30, None)
    assert SlaTarget.from_dict({"acknowledge_within_minutes": 5.0}).acknowledge_within_minutes == 5


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"per_severity": []},
        {"per_severity": {"SEV1": 5}},
        {"per_severity": {"SEV1": {"acknowledge_within_minutes": "soon"}}},
        {"per_severity": {"SEV1": {"acknowledge_within_minutes": 1.5}}},
        {"per_severity": {"SEV1": {"acknowledge_within_minutes": True}}},
    ],
)
def test_from_dict_rejects_bad_shapes(data):
    with pytest.raises(ValidationFailed):
        SlaSettings.from_dict(data)


# ---------------------------------------------------------------- completeness


@pytest.mark.parametrize(
    "settings",
    [
        SlaSettings({}),
        SlaSettings({"SEV1": SlaTarget(15, 240)}),
        SlaSettings({"SEV2": SlaTarget(None, 480)}),
        SlaSettings({"SEV2": SlaTarget(30, None)}),
        SlaSettings({"SEV2": SlaTarget()}),
    ],
)
def test_require_complete_refuses_missing_settings(settings):
    with pytest.raises(ConfigurationError) as caught:
        require_complete(settings, "SEV2")
    assert str(caught.value) == "incomplete SLA settings for SEV2"
    assert caught.value.code == "INTERNAL_ERROR"
    assert caught.value.status == 500


def test_require_complete_returns_the_target():
    assert require_complete(SlaSettings({"SEV2": SlaTarget(1, 1)}), "SEV2") == SlaTarget(1, 1)


# ---------------------------------------------------------------- validation and updates


@pytest.mark.parametrize("minutes", [1, 60, MAX_SLA_MINUTES])
def test_valid_minutes(minutes):
    validate_sla_update(SlaSettings({"SEV1": SlaTarget(minutes, minutes)}))


@pytest.mark.parametrize("minutes", [0, -1, MAX_SLA_MINUTES + 1])
def test_out_of_range_minutes(minutes):
    with pytest.raises(ValidationFailed) as caught:
        validate_sla_update(SlaSettings({"SEV1": SlaTarget(minutes, None)}))
    assert caught.value.details["fields"][0]["field"] == "per_severity.SEV1.acknowledge_within_minutes"


def test_acknowledge_may_equal_but_not_exceed_resolve():
    validate_sla_update(SlaSettings({"SEV1": SlaTarget(60, 60)}))
    with pytest.raises(ValidationFailed) as caught:
        validate_sla_update(SlaSettings({"SEV1": SlaTarget(61, 60)}))
    assert "must not exceed" in caught.value.details["fields"][0]["message"]


def test_unknown_severity_key():
    with pytest.raises(ValidationFailed) as caught:
        validate_sla_update(SlaSettings({"SEV9": SlaTarget(1, 2)}))
    assert caught.value.details["fields"][0]["field"] == "per_severity.SEV9"


def test_nulls_are_allowed_in_settings():
    validate_sla_update(SlaSettings({"SEV1": SlaTarget(None, None)}))


def test_apply_update_merges_field_by_field():
    updated = apply_sla_update(DEFAULT_SLA_SETTINGS, {"SEV1": {"acknowledge_within_minutes": 10}})
    assert updated.per_severity["SEV1"] == SlaTarget(10, 240)
    assert updated.per_severity["SEV0"] == DEFAULT_SLA_SETTINGS.per_severity["SEV0"]
    assert DEFAULT_SLA_SETTINGS.per_severity["SEV1"] == SlaTarget(15, 240)  # not mutated


def test_apply_update_null_clears_and_makes_incomplete():
    updated = apply_sla_update(DEFAULT_SLA_SETTINGS, {"SEV3": {"resolve_within_minutes": None}})
    assert updated.per_severity["SEV3"] == SlaTarget(240, None)
    with pytest.raises(ConfigurationError):
        require_complete(updated, "SEV3")


def test_apply_update_checks_the_merged_result():
    with pytest.raises(ValidationFailed):
        apply_sla_update(DEFAULT_SLA_SETTINGS, {"SEV0": {"acknowledge_within_minutes": 61}})


def test_apply_update_refuses_unknown_fields():
    with pytest.raises(ValidationFailed) as caught:
        apply_sla_update(DEFAULT_SLA_SETTINGS, {"SEV0": {"ack": 1}})
    assert caught.value.details["fields"][0]["field"] == "per_severity.SEV0.ack"


def test_apply_update_can_add_a_missing_severity():
    updated = apply_sla_update(
        SlaSettings({}), {"SEV2": {"acknowledge_within_minutes": 5, "resolve_within_minutes": 9}}
    )
    assert require_complete(updated, "SEV2") == SlaTarget(5, 9)


# ---------------------------------------------------------------- arithmetic


def test_exactly_on_the_due_time_is_met():
    outcome = evaluate(T0, T0 + timedelta(minutes=30), 30, scale=get_settings().effective_time_scale)
    assert outcome.due_at == T0 + timedelta(minutes=30)
    assert outcome.met is True
    assert outcome.elapsed_seconds == 1800


def test_one_microsecond_late_is_breached():
    outcome = evaluate(T0, T0 + timedelta(minutes=30, microseconds=1), 30, scale=get_settings().effective_time_scale)
    assert outcome.met is False
    assert outcome.elapsed_seconds == 1800


def test_early_is_met():
    outcome = evaluate(T0, T0 + timedelta(seconds=59.9), 1, scale=get_settings().effective_time_scale)
    assert outcome.met and outcome.elapsed_seconds == 59


def test_done_before_created_is_met_with_zero_elapsed():
    outcome = evaluate(T0, T0 - timedelta(seconds=5), 1, scale=get_settings().effective_time_scale)
    assert outcome.met and outcome.elapsed_seconds == 0


def test_naive_times_are_utc_and_offsets_compare_correctly():
    naive = T0.replace(tzinfo=None)
    assert evaluate(naive, T0 + timedelta(minutes=5), 5, scale=get_settings().effective_time_scale).met
    plus_two = timezone(timedelta(hours=2))
    assert evaluate(
        T0, (T0 + timedelta(minutes=5)).astimezone(plus_two), 5, scale=get_settings().effective_time_scale
    ).met
    assert (
        evaluate(T0, T0 + timedelta(minutes=5), 5, scale=get_settings().effective_time_scale).due_at.tzinfo is not None
    )


def test_due_at_helpers():
    target = SlaTarget(15, 240)
    assert acknowledge_due_at(T0, target, scale=get_settings().effective_time_scale) == T0 + timedelta(minutes=15)
    assert resolve_due_at(T0, target, scale=get_settings().effective_time_scale) == T0 + timedelta(hours=4)
    with pytest.raises(ConfigurationError):
        acknowledge_due_at(T0, SlaTarget(None, 5), scale=get_settings().effective_time_scale)
    with pytest.raises(ConfigurationError):
        resolve_due_at(T0, SlaTarget(5, None), scale=get_settings().effective_time_scale)


def test_breach_and_delay():
    due = T0 + timedelta(minutes=5)
    assert not sla.is_breached(due, due)
    assert sla.is_breached(due, due + timedelta(microseconds=1))
    assert sla.seconds_until(due, T0) == 300
    assert sla.seconds_until(due, T0 + timedelta(seconds=299.5)) == 1
    assert sla.seconds_until(due, due + timedelta(hours=1)) == 0


@given(
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)),
    st.integers(min_value=0, max_value=10**8),
    st.integers(min_value=1, max_value=MAX_SLA_MINUTES),
)
def test_evaluate_agrees_with_is_breached(created_at, delay_ms, minutes):
    done_at = created_at + timedelta(milliseconds=delay_ms)
    outcome = evaluate(created_at, done_at, minutes, scale=get_settings().effective_time_scale)
    assert outcome.met == (not sla.is_breached(outcome.due_at, done_at))
    assert outcome.met == (delay_ms <= minutes * 60_000)
    assert outcome.elapsed_seconds == delay_ms // 1000


def test_the_resolve_outcome_is_recorded_once_and_cleared_by_a_reopen() -> None:
    from chalicelib.incident.sla import with_resolution, without_resolution

    created = datetime(2026, 11, 22, 12, tzinfo=UTC)
    document = {"acknowledge_due_at": "2026-11-22T12:30:00.000Z", "resolve_due_at": "2026-11-22T14:00:00.000Z"}
    on_time = with_resolution(document, created_at=created, resolved_at=created + timedelta(hours=1))
    assert (on_time["resolve_met"], on_time["resolved_after_seconds"]) == (True, 3600)
    # A second resolution without a reopen keeps the first outcome.
    assert with_resolution(on_time, created_at=created, resolved_at=created + timedelta(hours=9)) == on_time
    reopened = without_resolution(on_time)
    assert reopened == document  # the due times stay; the outcome is running again
    late = with_resolution(reopened, created_at=created, resolved_at=created + timedelta(hours=3))
    assert (late["resolve_met"], late["resolved_after_seconds"]) == (False, 10800)
    assert without_resolution(None) == {} and with_resolution(None, created_at=created, resolved_at=created) == {}
