"""The event log's pure rules as tables: what a record keeps of headers and bodies (never a secret
or a signature's value), what a request became, its slot (the bound per minute), and which
events may be replayed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from chalicelib.errors import (
    InternalError,
    InvalidPayload,
    InvalidSignature,
    IpNotAllowed,
    RateLimited,
    ServiceUnavailable,
    SignatureExpired,
    WebhookRevoked,
)
from chalicelib.eventlog import capture, replay, slots
from chalicelib.eventlog.outcome import Outcome, of_error, of_ingest
from chalicelib.integration.triggering import IngestResult

NOW = datetime(2026, 11, 22, 12, 0, 37, 250_000, tzinfo=UTC)
ROUTING_KEY = "0123456789abcdef0123456789abcdef"

# --- headers -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "signature", "kept"),
    [
        ("User-Agent", "Alertmanager/0.25.0", None, "Alertmanager/0.25.0"),
        ("Content-Type", "application/json", None, "application/json"),
        ("X-Amz-Sns-Message-Id", "165545c9", None, "165545c9"),
        ("Sentry-Hook-Resource", "issue", None, "issue"),
        ("X-Service-Timestamp", "1795348800", "valid", "1795348800"),
        ("Authorization", f"Bearer {ROUTING_KEY}", None, "present"),
        ("Proxy-Authorization", "Basic eDp5", None, "present"),
        ("Cookie", "session=abc", None, "present"),
        ("X-Api-Key", "k-123", None, "present"),
        ("X-Auth-Token", "t-123", None, "present"),
        ("X-Client-Secret", "s-123", None, "present"),
        ("X-Service-Signature", "sha256=" + "a" * 64, "valid", "valid"),
        ("X-Service-Signature", "sha256=" + "b" * 64, "invalid", "invalid"),
        ("X-Service-Signature", "sha256=" + "c" * 64, None, "present"),
        ("Sentry-Hook-Signature", "d" * 64, "valid", "valid"),
        ("X-Hub-Signature-256", "sha256=e", None, "present"),
    ],
)
def test_headers_keep_everything_but_secrets_and_signatures(
    name: str, value: str, signature: capture.SignatureState | None, kept: str
) -> None:
    recorded = capture.kept_headers({name: value}, signature)
    assert recorded == {name.lower(): kept}
    assert value not in recorded.values() or kept == value


def test_headers_are_bounded_in_number_and_length() -> None:
    many = {f"X-Header-{n}": "v" * 2000 for n in range(100)}
    recorded = capture.kept_headers(many, None)
    assert len(recorded) == capture.MAX_HEADERS
    assert {len(value) for value in recorded.values()} == {capture.MAX_HEADER_VALUE}


def test_a_replay_sends_no_credential_or_signature_state_again() -> None:
    recorded = {
        "authorization": "present",
        "x-service-signature": "valid",
        "user-agent": "curl",
        "x-api-key": "present",
    }
    assert capture.replayable_headers(recorded) == {"user-agent": "curl"}


# --- bodies ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "text", "size", "truncated", "whole"),
    [
        (b"", None, 0, False, True),
        (b'{"title": "Disk full"}', '{"title": "Disk full"}', 22, False, True),
        (b"x" * capture.BODY_LIMIT, "x" * capture.BODY_LIMIT, capture.BODY_LIMIT, False, True),
        (b"x" * (capture.BODY_LIMIT + 1), "x" * capture.BODY_LIMIT, capture.BODY_LIMIT + 1, True, False),
        (b"x" * 300_000, "x" * capture.BODY_LIMIT, 300_000, True, False),
        (b"\xff\xfe not utf-8", "\ufffd\ufffd not utf-8", 12, False, False),
        ("é".encode() * 9000, "é" * 8192, 18000, True, False),  # cut between two characters: still reads
    ],
)
def test_bodies_are_kept_up_to_16_kib(raw: bytes, text: str | None, size: int, truncated: bool, whole: bool) -> None:
    assert capture.bounded_body(raw) == capture.Body(text=text, size=size, truncated=truncated, whole=whole)


@pytest.mark.parametrize(
    ("raw", "masked"),
    [
        (
            f'{{"routing_key": "{ROUTING_KEY}", "event_action": "trigger"}}',
            '{"routing_key": "012345' + "*" * 26 + '", "event_action": "trigger"}',
        ),
        (f'{{"routing_key":"{ROUTING_KEY}"}}', '{"routing_key":"012345' + "*" * 26 + '"}'),
        ('{"payload": {"routing_key": "abc"}}', '{"payload": {"routing_key": "abc"}}'),
        ('{"routing_key": "a\\"b12345"}', '{"routing_key": "a\\"b12***"}'),
        ('{"title": "routing_key"}', '{"title": "routing_key"}'),
    ],
)
def test_a_routing_key_in_the_body_is_masked_in_place(raw: str, masked: str) -> None:
    body = capture.bounded_body(raw.encode())
    assert body.text == masked and body.size == len(raw) and len(masked) == len(raw)
    assert ROUTING_KEY not in (body.text or "")


# --- outcomes ----------------------------------------------------------------------------------------


def result(**fields: Any) -> IngestResult:
    base: dict[str, Any] = {"incident": None, "created": False, "deduplicated": False}
    return IngestResult(**{**base, **fields})


INCIDENT = SimpleNamespace(incident_number="INC-2026-0042")
ALERT = SimpleNamespace(alert_id="alr_1", suppressed_by=None)
MAINTENANCE = SimpleNamespace(alert_id="alr_2", suppressed_by={"kind": "maintenance", "window_id": "mw_1"})
RULE = SimpleNamespace(alert_id="alr_3", suppressed_by={"kind": "event_rule", "rule_ids": ["er_1"]})


@pytest.mark.parametrize(
    ("ingested", "kind", "incident", "alert", "suppressed_by", "rule_ids"),
    [
        (result(incident=INCIDENT, created=True, alert=ALERT), "created", "INC-2026-0042", "alr_1", None, ()),
        (result(incident=INCIDENT, grouped=True, alert=ALERT), "grouped", "INC-2026-0042", "alr_1", None, ()),
        (result(incident=INCIDENT, deduplicated=True, alert=ALERT), "deduplicated", "INC-2026-0042", "alr_1", None, ()),
        (result(suppressed=True, alert=MAINTENANCE), "suppressed", None, "alr_2", MAINTENANCE.suppressed_by, ()),
        (result(suppressed=True, deduplicated=True, alert=RULE), "suppressed", None, "alr_3", RULE.suppressed_by, ()),
        (result(dropped=True, dropped_by=("er_7", "er_8")), "dropped", None, None, None, ("er_7", "er_8")),
        (result(note="no open incident for this alert"), "accepted", None, None, None, ()),
    ],
)
def test_what_an_ingest_became(
    ingested: IngestResult,
    kind: str,
    incident: str | None,
    alert: str | None,
    suppressed_by: dict[str, Any] | None,
    rule_ids: tuple[str, ...],
) -> None:
    said = of_ingest(ingested, action="trigger", title="Disk full", warnings=("w1", "w2"))
    assert (said.outcome, said.incident_number, said.alert_id) == (kind, incident, alert)
    assert (said.suppressed_by, said.rule_ids) == (suppressed_by, rule_ids)
    assert (said.action, said.title, said.warnings, said.message) == (
        "trigger",
        "Disk full",
        ("w1", "w2"),
        ingested.note,
    )


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (InvalidPayload("no title"), "refused"),
        (InvalidSignature("bad"), "refused"),
        (SignatureExpired("old"), "refused"),
        (IpNotAllowed("nope"), "refused"),
        (WebhookRevoked("gone"), "refused"),
        (RateLimited("slow down"), "rate_limited"),
        (ServiceUnavailable("retry"), "failed"),
        (InternalError("oops"), "failed"),
    ],
)
def test_what_an_error_became(error: Any, kind: str) -> None:
    known = Outcome("accepted", action="trigger", title="Disk full", warnings=("kept in details",))
    said = of_error(error, known)
    assert (said.outcome, said.error_code, said.message) == (kind, error.code, error.message)
    assert (said.action, said.title, said.warnings) == ("trigger", "Disk full", ("kept in details",))
    assert of_error(error).outcome == kind and of_error(error).title is None


# --- slots -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hits", "rate_limited", "event_id", "shared"),
    [
        (1, False, "20261122120037.d001", False),
        (30, False, "20261122120037.d030", False),
        (31, False, "20261122120059.x", True),  # past the minute's own records: the shared one
        (100, False, "20261122120059.x", True),
        (None, True, "20261122120059.x", True),
        (None, False, "20261122120030.r", True),  # refused at the door: one per 10 s
    ],
)
def test_slots(hits: int | None, rate_limited: bool, event_id: str, shared: bool) -> None:
    slot = slots.slot_for(NOW, hits=hits, rate_limited=rate_limited, window_seconds=60)
    assert slot == slots.Slot(event_id, shared)
    assert slots.is_event_id(slot.event_id)


def test_a_flood_in_one_minute_keeps_a_bounded_number_of_records() -> None:
    seen = {
        slots.slot_for(NOW.replace(second=second), hits=hits, rate_limited=hits > 100, window_seconds=60).event_id
        for second in range(60)
        for hits in range(second * 50 + 1, second * 50 + 51)
    }
    door = {
        slots.slot_for(NOW.replace(second=s), hits=None, rate_limited=False, window_seconds=60).event_id
        for s in range(60)
    }
    assert len(seen) == slots.DELIVERY_SLOTS + 1
    assert len(door) == 60 // slots.DOOR_SECONDS


def test_event_ids_sort_as_time_and_bound_time_ranges() -> None:
    earlier = slots.slot_for(NOW.replace(second=5), hits=7, rate_limited=False, window_seconds=60).event_id
    later = slots.slot_for(NOW.replace(second=6), hits=2, rate_limited=False, window_seconds=60).event_id
    replayed = slots.replay_slot(NOW).event_id
    assert earlier < later < replayed
    assert slots.lower_bound(NOW.replace(second=6)) <= later <= slots.upper_bound(NOW.replace(second=6))
    assert slots.upper_bound(NOW.replace(second=5)) < later
    assert slots.is_event_id(replayed)
    for bad in ("", "2026112212003.d001", "20261122120037.d1", "20261122120037.q", "../x", "20261122120037.pzz"):
        assert not slots.is_event_id(bad)


# --- which events may be replayed ---------------------------------------------------------------------


@dataclass
class Event:
    outcome: str = "refused"
    replayed_as: str | None = None
    error_code: str | None = "INVALID_PAYLOAD"
    signature: str | None = None
    body_whole: bool = True


@pytest.mark.parametrize(
    ("event", "state", "signed", "reason"),
    [
        (Event(), "active", False, None),
        (Event(signature="valid"), "active", True, None),
        (Event(error_code="IP_NOT_ALLOWED"), "active", False, None),
        (Event(outcome="created", error_code=None), "active", False, "Only refused events can be replayed"),
        (Event(outcome="rate_limited", error_code="RATE_LIMITED"), "active", False, "this one was rate limited"),
        (Event(outcome="failed", error_code="INTERNAL_ERROR"), "active", False, "Only refused events"),
        (Event(replayed_as="20261122120100.pdeadbeef"), "active", False, "replayed already"),
        (Event(error_code="INVALID_SIGNATURE", signature="invalid"), "active", True, "refused for its signature"),
        (Event(error_code="SIGNATURE_EXPIRED", signature="invalid"), "active", True, "refused for its signature"),
        (Event(error_code="IP_NOT_ALLOWED"), "active", True, "never checked"),
        (Event(body_whole=False), "active", False, "not kept whole"),
        (Event(), "revoked", False, "revoked"),
    ],
)
def test_which_events_may_be_replayed(event: Event, state: str, signed: bool, reason: str | None) -> None:
    said = replay.why_not(event, integration_state=state, signature_required=signed)  # type: ignore[arg-type]
    assert said is None if reason is None else (said is not None and reason in said)
