"""The pure rules of heartbeats: limits, the ping token, due times, and how pings, missed pings,
pauses and new intervals move the state. Tables, no AWS."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.errors import ValidationFailed
from chalicelib.heartbeat import rules
from chalicelib.heartbeat.rules import Beat, is_overdue, new_beat, pinged, reconfigured, went_down

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


def beat(**changes: object) -> Beat:
    base = new_beat(interval_seconds=300, grace_seconds=60, enabled=True, now=T0)
    return replace(base, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("interval", "ok"),
    [(59, False), (60, True), (300, True), (7 * 86400, True), (7 * 86400 + 1, False), (0, False), (True, False)],
)
def test_interval_limits(interval: int, ok: bool) -> None:
    if ok:
        rules.check_interval(interval)
    else:
        with pytest.raises(ValidationFailed) as refused:
            rules.check_interval(interval)
        assert refused.value.details == {
            "fields": [{"field": "interval_seconds", "message": "must be 60 to 604800 seconds (7 days)"}]
        }


@pytest.mark.parametrize(("grace", "ok"), [(-1, False), (0, True), (86400, True), (86401, False), (False, False)])
def test_grace_limits(grace: int, ok: bool) -> None:
    if ok:
        rules.check_grace(grace)
    else:
        with pytest.raises(ValidationFailed):
            rules.check_grace(grace)


def test_token_round_trip_and_malformed_tokens() -> None:
    heartbeat_id, secret = rules.new_heartbeat_id(), rules.new_secret()
    token = rules.token_of(heartbeat_id, secret)
    assert rules.split_token(token) == (heartbeat_id, secret)
    assert rules.looks_like_id(heartbeat_id) and not rules.looks_like_id(token)
    for bad in ("", heartbeat_id, secret, token + "0", token.upper(), f"{heartbeat_id}.{secret[:-1]}", "../" + token):
        assert rules.split_token(bad) is None, bad


def test_the_secret_is_checked_against_its_keyed_hash_bound_to_the_id() -> None:
    stored = rules.hash_secret("hmac", "hb_" + "0" * 24, "a" * 32)
    assert rules.secret_matches(stored, "hmac", "hb_" + "0" * 24, "a" * 32)
    assert not rules.secret_matches(stored, "hmac", "hb_" + "0" * 24, "b" * 32)
    assert not rules.secret_matches(stored, "hmac", "hb_" + "1" * 24, "a" * 32)  # another heartbeat's id
    assert not rules.secret_matches(stored, "other", "hb_" + "0" * 24, "a" * 32)
    assert "a" * 32 not in stored


@pytest.mark.parametrize(
    ("changes", "status", "next_due", "due"),
    [
        ({}, "waiting", T0 + 5 * MINUTE, T0 + 6 * MINUTE),
        ({"state": "up", "window_started_at": T0 + MINUTE}, "up", T0 + 6 * MINUTE, T0 + 7 * MINUTE),
        ({"grace_seconds": 0}, "waiting", T0 + 5 * MINUTE, T0 + 5 * MINUTE),
        ({"state": "down"}, "down", None, None),
        ({"enabled": False}, "paused", None, None),
        ({"enabled": False, "state": "down"}, "paused", None, None),
    ],
)
def test_status_and_due_times(changes: dict[str, object], status: str, next_due: datetime | None, due: object) -> None:
    current = beat(**changes)
    assert (current.status, current.next_due_at, current.due_at) == (status, next_due, due)
    assert current.awaiting_ping is (due is not None)


@pytest.mark.parametrize(
    ("changes", "at", "overdue"),
    [
        ({}, T0 + 6 * MINUTE - timedelta(microseconds=1), False),
        ({}, T0 + 6 * MINUTE, True),  # due_at <= now: exactly at the end of the grace
        ({"state": "up"}, T0 + 10 * MINUTE, True),
        ({"state": "down"}, T0 + 100 * MINUTE, False),  # already down: one outage, not one per check
        ({"enabled": False}, T0 + 100 * MINUTE, False),  # paused never fires
    ],
)
def test_overdue(changes: dict[str, object], at: datetime, overdue: bool) -> None:
    assert is_overdue(beat(**changes), at) is overdue


def test_a_missed_ping_opens_the_next_outage_and_leaves_the_due_index() -> None:
    at = T0 + 6 * MINUTE
    down = went_down(beat(outages=2), at, "42")
    assert (down.state, down.outages, down.incident_number, down.down_since) == ("down", 3, "42", at)
    assert down.due_at is None and down.status == "down"
    assert went_down(beat(), at, None).incident_number is None  # suppressed: down without an incident
    with pytest.raises(ValueError, match="overdue"):
        went_down(beat(), T0, "1")
    with pytest.raises(ValueError, match="overdue"):
        went_down(down, at + MINUTE, "1")


@pytest.mark.parametrize(
    ("changes", "ended", "ignored"),
    [
        ({}, None, False),  # the first ping
        ({"state": "up"}, None, False),
        ({"state": "down", "outages": 3, "incident_number": "42"}, 3, False),
        ({"enabled": False}, None, True),
        ({"enabled": False, "state": "down", "outages": 1}, None, True),
    ],
)
def test_a_ping(changes: dict[str, object], ended: int | None, ignored: bool) -> None:
    at = T0 + 2 * MINUTE
    before = beat(**changes)
    outcome = pinged(before, at)
    assert (outcome.ended_outage, outcome.ignored) == (ended, ignored)
    if ignored:
        assert outcome.beat == before
        return
    after = outcome.beat
    assert (after.state, after.last_ping_at, after.window_started_at) == ("up", at, at)
    assert (after.incident_number, after.down_since, after.outages) == (None, None, before.outages)
    assert after.next_due_at == at + 5 * MINUTE and after.due_at == at + 6 * MINUTE


def test_reconfigure_applies_a_new_interval_to_the_wait_in_progress() -> None:
    current = beat(state="up", window_started_at=T0)
    longer = reconfigured(current, T0 + 3 * MINUTE, interval_seconds=600, grace_seconds=0)
    assert (longer.next_due_at, longer.due_at, longer.window_started_at) == (T0 + 10 * MINUTE, T0 + 10 * MINUTE, T0)
    with pytest.raises(ValidationFailed):
        reconfigured(current, T0, interval_seconds=30)
    with pytest.raises(ValidationFailed):
        reconfigured(current, T0, grace_seconds=-5)


def test_pause_and_resume() -> None:
    paused = reconfigured(beat(state="up"), T0 + MINUTE, enabled=False)
    assert (paused.status, paused.due_at) == ("paused", None)
    resumed = reconfigured(paused, T0 + 60 * MINUTE, enabled=True)
    # The silence while paused is no outage: the wait starts again at the resume.
    assert (resumed.status, resumed.window_started_at) == ("up", T0 + 60 * MINUTE)
    assert resumed.due_at == T0 + 66 * MINUTE
    # A down heartbeat paused and resumed stays down until a ping ends its outage.
    down = beat(state="down", outages=1, incident_number="7")
    back = reconfigured(reconfigured(down, T0, enabled=False), T0 + MINUTE, enabled=True)
    assert (back.status, back.incident_number, back.due_at) == ("down", "7", None)
    # enabled=True on an enabled heartbeat changes nothing.
    assert reconfigured(beat(), T0 + 9 * MINUTE, enabled=True) == beat()


def test_outage_dedup_keys_are_one_per_outage() -> None:
    assert [rules.outage_dedup_key(n) for n in (1, 2)] == ["outage-1", "outage-2"]
