"""TIME_SCALE divides the waits the workers schedule, in the local and test stages only."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from chalicelib import clock
from chalicelib.delivery.webhook import RETRIES
from chalicelib.escalation.steps import EscalationPolicy, Level, Target, start
from chalicelib.incident.sla import due_at
from chalicelib.settings import get_settings, reset_settings

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    yield monkeypatch
    monkeypatch.undo()
    reset_settings()


def scale(environment: pytest.MonkeyPatch, value: str, stage: str = "test") -> None:
    environment.setenv("TIME_SCALE", value)
    environment.setenv("TOCSIN_STAGE", stage)
    reset_settings()


def test_unset_leaves_every_wait_as_it_is(environment: pytest.MonkeyPatch) -> None:
    environment.delenv("TIME_SCALE", raising=False)
    reset_settings()
    assert clock.scaled(timedelta(minutes=5), scale=get_settings().effective_time_scale) == timedelta(minutes=5)
    assert due_at(T0, 15, scale=get_settings().effective_time_scale) == T0 + timedelta(minutes=15)
    assert RETRIES.next_attempt_at(1, T0, settings=get_settings()) == T0 + timedelta(minutes=1)


def test_the_test_stage_divides_escalation_sla_and_retry_waits(environment: pytest.MonkeyPatch) -> None:
    scale(environment, "60")
    assert clock.scaled(timedelta(minutes=1), scale=get_settings().effective_time_scale) == timedelta(seconds=1)
    policy = EscalationPolicy("p1", "Primary", (Level((Target("user", "u1"),), delay_minutes=2),))
    _, step = start(policy, T0, "token", settings=get_settings())
    assert step.next_at == T0 + timedelta(seconds=2)
    assert due_at(T0, 15, scale=get_settings().effective_time_scale) == T0 + timedelta(seconds=15)
    assert RETRIES.next_attempt_at(1, T0, settings=get_settings()) == T0 + timedelta(seconds=1)


def test_other_stages_ignore_it(environment: pytest.MonkeyPatch) -> None:
    scale(environment, "60", stage="dev")
    environment.setenv("API_KEY_HMAC_SECRET", "a-real-secret")
    reset_settings()
    assert clock.scaled(timedelta(minutes=1), scale=get_settings().effective_time_scale) == timedelta(minutes=1)
    assert due_at(T0, 15, scale=get_settings().effective_time_scale) == T0 + timedelta(minutes=15)


def test_it_must_be_positive(environment: pytest.MonkeyPatch) -> None:
    scale(environment, "0")
    with pytest.raises(ValueError):
        clock.scaled(timedelta(minutes=1), scale=get_settings().effective_time_scale)
