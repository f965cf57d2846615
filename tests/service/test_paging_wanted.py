"""Pages go out only while their incident wants them (chalicelib/paging/wanted.py), on moto: the
probe's race (escalate, resolve and acknowledge at once) pages nobody after the resolve; a resolve
or an acknowledge injected between the worker's read and its claim makes the claim fail and the
page be skipped and recorded once; a level escalated by hand after an acknowledge still pages."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.errors import IncidentResolved
from chalicelib.incident import commands, repository
from chalicelib.paging import escalation_runs, handlers, reach, wanted
from chalicelib.queue.messages import Message
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.service.test_escalation_runtime import create, drain, fake_slack, setup
from tests.service.test_incident_service import principal
from tests.service.test_paging_rules import ada, open_incident, providers, run_step, sqs

__all__ = ["ada", "fake_slack", "providers", "setup", "sqs"]  # fixtures shared with those modules


def started(org: Org, world: dict[str, Any]) -> str:
    """An incident whose escalation began and whose level 1 (Ana) was paged."""
    number = create(org, world)
    created = next(m for m in drain() if m.message_type == "incident.created")
    with clock.frozen(NOW):
        handlers.on_incident_created(created, get_settings())
    deliver(drain(), NOW)
    return number


def deliver(messages: list[Message], at: datetime) -> None:
    with clock.frozen(at):
        for message in messages:
            if message.message_type == escalation_runs.DELIVER_NOTIFICATION:
                handlers.on_deliver_notification(message, get_settings())


def resolve(org: Org, number: str, at: datetime) -> None:
    commands.change_status(
        organization_id=org.organization_id,
        incident_number=number,
        status="resolved",
        comment=None,
        now=at,
        principal=principal(org, "ops@acme.test"),
    )


def acknowledge(org: Org, number: str, at: datetime) -> None:
    commands.acknowledge(organization_id=org.organization_id, incident_number=number, principal=principal(org), now=at)


def acknowledge_unless_resolved(org: Org, number: str, at: datetime) -> None:
    """An acknowledge racing a resolve: refused (409) when the resolve committed first."""
    try:
        acknowledge(org, number, at)
    except IncidentResolved:
        assert repository.get_incident(org.organization_id, number).status == "resolved"


def titles(org: Org, number: str) -> list[str]:
    return [entry.title or "" for entry in repository.get_with_timeline(org.organization_id, number).timeline]


def paged(org: Org, number: str, name: str) -> int:
    return sum(1 for title in titles(org, number) if title.startswith(f"Paged {name} by"))


def escalate_by_hand(org: Org, number: str, at: datetime) -> list[Message]:
    outcome = escalation_runs.escalate(
        organization_id=org.organization_id, incident_number=number, actor="me", now=at, settings=get_settings()
    )
    assert outcome.escalated
    return [m for m in drain() if m.message_type == escalation_runs.DELIVER_NOTIFICATION]


def test_a_level_escalated_before_a_resolve_is_not_paged_after_it(org: Org, setup: dict[str, Any]) -> None:
    number = started(org, setup)
    assert paged(org, number, "Ana") == 1
    level_two = escalate_by_hand(org, number, NOW + timedelta(minutes=1))
    resolve(org, number, NOW + timedelta(minutes=1, seconds=1))
    deliver(level_two, NOW + timedelta(minutes=1, seconds=2))
    deliver(level_two, NOW + timedelta(minutes=1, seconds=3))  # SQS delivers it again: recorded once
    assert paged(org, number, "Bo") == 0
    assert titles(org, number).count("Page to Bo skipped: incident resolved") == 1
    [entry] = [
        e
        for e in repository.get_with_timeline(org.organization_id, number).timeline
        if (e.title or "").startswith("Page to")
    ]
    assert entry.event_type == "page_skipped" and entry.details["level"] == 2


def test_a_level_reached_by_its_timer_is_not_paged_after_an_acknowledge(org: Org, setup: dict[str, Any]) -> None:
    number = create(org, setup)
    created = next(m for m in drain() if m.message_type == "incident.created")
    with clock.frozen(NOW):
        handlers.on_incident_created(created, get_settings())
    queued = drain()
    deliver(queued, NOW)
    timer = next(m for m in queued if m.message_type == escalation_runs.ESCALATION_TIMER)
    step = escalation_runs.on_timer(
        organization_id=org.organization_id,
        incident_number=number,
        token=timer.payload["token"],
        now=NOW + timedelta(minutes=5),
        settings=get_settings(),
    )
    assert step is not None and step.level == 2
    acknowledge(org, number, NOW + timedelta(minutes=5, seconds=1))
    deliver(drain(), NOW + timedelta(minutes=5, seconds=2))
    assert paged(org, number, "Bo") == 0
    assert "Page to Bo skipped: incident acknowledged" in titles(org, number)


def test_a_level_escalated_by_hand_after_an_acknowledge_is_paged(org: Org, setup: dict[str, Any]) -> None:
    number = started(org, setup)
    acknowledge(org, number, NOW + timedelta(minutes=1))
    deliver(escalate_by_hand(org, number, NOW + timedelta(minutes=2)), NOW + timedelta(minutes=2))
    assert paged(org, number, "Bo") == 1
    assert not any("skipped" in title for title in titles(org, number))


def inject_once(monkeypatch: pytest.MonkeyPatch, change: Callable[[], None]) -> list[str]:
    """Run `change` after the worker's read and check, just before its claim (once)."""
    real = wanted.guard_of
    ran: list[str] = []

    def guard_then_change(*args: Any, **kwargs: Any) -> Any:
        guard = real(*args, **kwargs)
        if not ran:
            ran.append("changed")
            change()
        return guard

    monkeypatch.setattr(wanted, "guard_of", guard_then_change)
    return ran


def test_a_resolve_between_the_read_and_the_claim_skips_the_page(
    org: Org, setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    number = started(org, setup)
    level_two = escalate_by_hand(org, number, NOW + timedelta(minutes=1))
    ran = inject_once(monkeypatch, lambda: resolve(org, number, NOW + timedelta(minutes=1, seconds=1)))
    deliver(level_two, NOW + timedelta(minutes=1, seconds=2))
    assert ran == ["changed"]
    assert repository.get_incident(org.organization_id, number).status == "resolved"
    assert paged(org, number, "Bo") == 0
    assert titles(org, number).count("Page to Bo skipped: incident resolved") == 1


def test_an_unrelated_change_between_the_read_and_the_claim_still_pages(
    org: Org, setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    number = started(org, setup)
    level_two = escalate_by_hand(org, number, NOW + timedelta(minutes=1))

    def retitle() -> None:
        commands.update_incident(
            organization_id=org.organization_id,
            incident_number=number,
            changes={"title": "Checkout slow"},
            now=NOW + timedelta(minutes=1),
            principal=principal(org),
        )
        # A timer step changes the stored escalation too: the claim reads again and still pages.
        repository.with_version_retries(lambda: _touch_escalation(org, number))

    inject_once(monkeypatch, retitle)
    deliver(level_two, NOW + timedelta(minutes=1, seconds=2))
    assert paged(org, number, "Bo") == 1


def _touch_escalation(org: Org, number: str) -> None:
    incident = repository.get_incident(org.organization_id, number)
    incident.escalation = {**incident.escalation, "next_at": clock.isoformat(NOW + timedelta(minutes=20))}
    repository.commit(incident, [])


def test_an_acknowledge_between_a_rule_steps_read_and_its_claim_stops_the_call(
    org: Org, ada: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    number, left = open_incident(org, ada, "SEV1")
    [call_step] = [m for m in left if m.message_type == reach.RULE_STEP]
    inject_once(monkeypatch, lambda: acknowledge(org, number, NOW + timedelta(minutes=4)))
    run_step(call_step, timedelta(minutes=5))
    assert ada["twilio"].requests == []
    assert "Page to Ada skipped: incident acknowledged" in titles(org, number)


def test_a_rule_step_that_finds_the_incident_acknowledged_is_stopped_quietly(org: Org, ada: dict[str, Any]) -> None:
    number, left = open_incident(org, ada, "SEV1")
    [call_step] = [m for m in left if m.message_type == reach.RULE_STEP]
    acknowledge(org, number, NOW + timedelta(minutes=1))
    run_step(call_step, timedelta(minutes=5))
    assert ada["twilio"].requests == []
    assert not any("skipped" in title for title in titles(org, number))  # acknowledging stops steps: no news


def test_the_probes_race_pages_nobody_after_the_resolve(org: Org, setup: dict[str, Any]) -> None:
    """Escalate, resolve and acknowledge at once on three incidents, as the probe did; the worker
    then handles what was queued. Whatever order the three commits took, level 2 is never paged
    once the incident is resolved: a level the escalate did reach is recorded as skipped."""
    numbers = [started(org, setup) for _ in range(3)]
    at = NOW + timedelta(minutes=1)
    for number in numbers:
        barrier = threading.Barrier(3)

        def at_once(action: Callable[[], object], barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            action()

        actions: list[Callable[[], object]] = [
            lambda n=number: escalation_runs.escalate(
                organization_id=org.organization_id, incident_number=n, actor="me", now=at, settings=get_settings()
            ),
            lambda n=number: resolve(org, n, at),
            lambda n=number: acknowledge_unless_resolved(org, n, at),
        ]
        with ThreadPoolExecutor(max_workers=3) as pool:
            list(pool.map(at_once, actions))
    deliver(drain(), at + timedelta(seconds=1))
    for number in numbers:
        assert repository.get_incident(org.organization_id, number).status == "resolved"
        assert paged(org, number, "Bo") == 0
        reached = any(title.startswith("Escalated by hand to level 2") for title in titles(org, number))
        assert reached == ("Page to Bo skipped: incident resolved" in titles(org, number))
