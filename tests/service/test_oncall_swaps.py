"""Shift swaps on moto: asking checks the span against the final shifts, the other members are told
once, two takers race to one winner with exactly one override, withdrawing, and a request nobody
took expires at its start and tells its requester once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.errors import Conflict, Forbidden, NotFound, ValidationFailed
from chalicelib.local import outbox
from chalicelib.oncall import service as schedules
from chalicelib.oncall import swaps
from chalicelib.oncall.tables import CoverageWatchRecord
from chalicelib.paging import swap_notices
from chalicelib.queue.messages import MAX_DELAY_SECONDS, Message
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.kit import factories as make
from tests.kit.factories import Person

# NOW is Sunday 2026-11-22 12:00Z. A daily rotation from Sunday 09:00Z: ana today, bo Monday, cy Tuesday.
DAY = timedelta(days=1)
START = NOW - timedelta(hours=3)


@pytest.fixture
def frozen(aws_env: None) -> Iterator[None]:
    with clock.frozen(NOW):
        yield


@pytest.fixture
def team(org: Org, frozen: None) -> dict[str, Any]:
    ana, bo, cy = (make.person(org, name) for name in ("Ana", "Bo", "Cy"))
    viewer = make.person(org, "Vi", role="viewer")
    stored = make.schedule(org, ana, bo, cy, rotation="daily", start=START, name="Payments primary")
    return {"ana": ana, "bo": bo, "cy": cy, "viewer": viewer, "schedule_id": stored.schedule_id, "org": org}


Sent = list[tuple[Message, int]]


@pytest.fixture
def sent(monkeypatch: Any) -> Sent:
    """What the swaps and their consumer publish, with each delay (moto would hold a delayed one back)."""
    found: Sent = []

    def record(message: Message, delay_seconds: int = 0) -> None:
        found.append((message, delay_seconds))

    monkeypatch.setattr(swaps, "publish", record)
    monkeypatch.setattr(swap_notices, "publish", record)
    return found


def of_type(sent: Sent, message_type: str) -> list[Message]:
    found = [message for message, _ in sent if message.message_type == message_type]
    sent.clear()
    return found


def ask(team: dict[str, Any], who: str = "ana", start: datetime | None = None, end: datetime | None = None) -> Any:
    return swaps.request_cover(
        organization_id=team["org"].organization_id,
        schedule_id=team["schedule_id"],
        requester_id=team[who].user_id,
        start=start or NOW + timedelta(hours=2),
        end=end or NOW + timedelta(hours=6),
        note="dentist",
        now=NOW,
    )


def take(team: dict[str, Any], swap_id: str, who: str = "bo", now: datetime = NOW) -> Any:
    return swaps.take_swap_request(
        organization_id=team["org"].organization_id,
        schedule_id=team["schedule_id"],
        swap_id=swap_id,
        taker_id=team[who].user_id,
        now=now,
    )


def emails_to(person: Person) -> list[outbox.OutboxItem]:
    return outbox.list_outbox(channel="email", to=person.email)


def test_asking_writes_an_open_request_and_publishes_the_notice_and_the_expiry(
    team: dict[str, Any], sent: Sent
) -> None:
    request = ask(team)
    assert (request.status, request.requester_id, request.note) == ("open", team["ana"].user_id, "dentist")
    assert [(message.message_type, delay) for message, delay in sent] == [
        (swaps.SWAP_REQUESTED, 0),
        (swaps.SWAP_EXPIRY, MAX_DELAY_SECONDS),  # two hours to its start: SQS's longest delay, then again
    ]
    expiry = sent[1][0]
    assert expiry.payload == {
        "schedule_id": team["schedule_id"],
        "swap_id": request.swap_id,
        "due": clock.isoformat(request.start),
    }
    listed = swaps.list_swap_requests(
        organization_id=team["org"].organization_id, schedule_id=team["schedule_id"], now=NOW
    )
    assert [r.swap_id for r in listed] == [request.swap_id]


@pytest.mark.parametrize(
    ("who", "start", "end", "error", "words"),
    [
        ("bo", NOW + timedelta(hours=2), NOW + timedelta(hours=6), ValidationFailed, "not on call"),
        ("ana", NOW + timedelta(hours=2), NOW + DAY, ValidationFailed, "not on call"),  # runs into bo's day
        ("ana", NOW - timedelta(hours=2), NOW + timedelta(hours=1), ValidationFailed, "The span cannot be asked for."),
        ("viewer", NOW + timedelta(hours=2), NOW + timedelta(hours=6), Forbidden, "Only people who can respond"),
    ],
)
def test_asking_is_refused(
    team: dict[str, Any], sent: Sent, who: str, start: datetime, end: datetime, error: type[Exception], words: str
) -> None:
    with pytest.raises(error) as caught:
        ask(team, who, start, end)
    assert words in str(caught.value)
    assert sent == []


def test_an_unknown_schedule_and_a_second_overlapping_request(team: dict[str, Any], sent: Sent) -> None:
    with pytest.raises(NotFound):
        swaps.request_cover(
            organization_id=team["org"].organization_id,
            schedule_id="sch_nope",
            requester_id=team["ana"].user_id,
            start=NOW + timedelta(hours=1),
            end=NOW + timedelta(hours=2),
            now=NOW,
        )
    first = ask(team)
    with pytest.raises(Conflict) as caught:
        ask(team, start=NOW + timedelta(hours=5), end=NOW + timedelta(hours=8))
    assert caught.value.details == {"swap_request_id": first.swap_id}


def test_the_other_members_who_can_respond_are_told_once(team: dict[str, Any], sent: Sent) -> None:
    ask(team)
    [requested] = of_type(sent, swaps.SWAP_REQUESTED)
    swap_notices.on_swap_requested(requested, get_settings())
    swap_notices.on_swap_requested(requested, get_settings())  # redelivered: nothing twice
    assert emails_to(team["ana"]) == [] and emails_to(team["viewer"]) == []
    for member in ("bo", "cy"):
        [email] = emails_to(team[member])
        assert email.subject == "Ana asks for cover on Payments primary: Sun 22 Nov 14:00 to Sun 22 Nov 18:00 (UTC)"
        assert "Note: dentist" in email.text


def test_two_takers_race_to_one_winner_and_one_override(team: dict[str, Any], sent: Sent) -> None:
    request = ask(team)
    barrier = threading.Barrier(2)

    def attempt(who: str) -> str:
        barrier.wait()
        try:
            take(team, request.swap_id, who)
        except Conflict as error:
            return f"lost: {error.message}"
        return "won"

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(attempt, ["bo", "cy"]))
    assert sorted(results) == ["lost: Someone took this request already.", "won"]
    winner = ("bo", "cy")[results.index("won")]
    stored = schedules.get_schedule(organization_id=team["org"].organization_id, schedule_id=team["schedule_id"])
    [override] = stored.schedule.overrides
    assert (override.user_id, override.start, override.end) == (team[winner].user_id, request.start, request.end)
    taken = swaps.get_swap_request(
        organization_id=team["org"].organization_id, schedule_id=team["schedule_id"], swap_id=request.swap_id
    )
    assert (taken.status, taken.taken_by, taken.override_id) == ("taken", team[winner].user_id, override.override_id)
    watch = CoverageWatchRecord.get(team["org"].organization_id, f"schedule#{team['schedule_id']}")
    assert watch.check_at == NOW  # the coverage is looked at again


def test_taking_tells_the_requester_and_the_shifts_show_the_taker(team: dict[str, Any], sent: Sent) -> None:
    request = ask(team)
    taken, override = take(team, request.swap_id)
    assert (taken.status, override.user_id) == ("taken", team["bo"].user_id)
    [message] = of_type(sent, swaps.SWAP_TAKEN)
    swap_notices.on_swap_taken(message, get_settings())
    [email] = emails_to(team["ana"])
    assert email.subject.startswith("Bo covers your shift on Payments primary")
    shifts = schedules.schedule_shifts(
        organization_id=team["org"].organization_id, schedule_id=team["schedule_id"], since=NOW, until=NOW + DAY
    )
    assert [(s.user_id, s.source) for s in shifts.shifts][:3] == [
        (team["ana"].user_id, "layer"),
        (team["bo"].user_id, "override"),
        (team["ana"].user_id, "layer"),
    ]
    with pytest.raises(Conflict):
        take(team, request.swap_id, "cy")
    with pytest.raises(Conflict):
        withdraw(team, request.swap_id, "ana")


def withdraw(team: dict[str, Any], swap_id: str, who: str, *, for_others: bool = False) -> Any:
    return swaps.withdraw_swap_request(
        organization_id=team["org"].organization_id,
        schedule_id=team["schedule_id"],
        swap_id=swap_id,
        actor_id=team[who].user_id,
        for_others=for_others,
        now=NOW,
    )


def test_withdrawing(team: dict[str, Any], sent: Sent) -> None:
    request = ask(team)
    with pytest.raises(Forbidden):
        withdraw(team, request.swap_id, "bo")
    assert withdraw(team, request.swap_id, "ana").status == "withdrawn"
    with pytest.raises(Conflict) as caught:
        take(team, request.swap_id)
    assert caught.value.message == "The request was withdrawn."
    again = ask(team)  # the withdrawn one no longer counts as an overlap
    assert withdraw(team, again.swap_id, "bo", for_others=True).status == "withdrawn"
    with pytest.raises(Conflict):
        take(team, request.swap_id, "ana")  # the requester takes nothing of their own


def test_nobody_took_it_the_expiry_tells_the_requester_once(team: dict[str, Any], sent: Sent) -> None:
    request = ask(team)
    [expiry] = of_type(sent, swaps.SWAP_EXPIRY)
    swap_notices.on_swap_expiry(expiry, get_settings())  # early: it waits on
    [(again, delay)] = sent
    assert (again.message_type, again.payload, delay) == (swaps.SWAP_EXPIRY, expiry.payload, MAX_DELAY_SECONDS)
    assert emails_to(team["ana"]) == []
    with clock.frozen(request.start + timedelta(seconds=1)):
        swap_notices.on_swap_expiry(again, get_settings())
        swap_notices.on_swap_expiry(again, get_settings())  # a redelivery tells nobody twice
    [email] = emails_to(team["ana"])
    assert email.subject.startswith("Nobody took your cover request on Payments primary")
    stored = swaps.get_swap_request(
        organization_id=team["org"].organization_id, schedule_id=team["schedule_id"], swap_id=request.swap_id
    )
    assert (stored.status, stored.expired_at) == ("expired", request.start + timedelta(seconds=1))


def test_a_taken_request_expires_silently(team: dict[str, Any], sent: Sent) -> None:
    request = ask(team)
    take(team, request.swap_id)
    [expiry] = of_type(sent, swaps.SWAP_EXPIRY)
    with clock.frozen(request.start + timedelta(minutes=1)):
        swap_notices.on_swap_expiry(expiry, get_settings())
    assert emails_to(team["ana"]) == []


def test_the_expiry_waits_until_the_start_at_most_sqs_s_delay(team: dict[str, Any], sent: Sent) -> None:
    ask(team, start=NOW + timedelta(days=3, hours=2), end=NOW + timedelta(days=3, hours=4))  # ana's Wednesday
    ask(team, start=NOW + timedelta(minutes=10), end=NOW + timedelta(hours=1))
    expiries = [delay for message, delay in sent if message.message_type == swaps.SWAP_EXPIRY]
    assert expiries == [MAX_DELAY_SECONDS, 601]
