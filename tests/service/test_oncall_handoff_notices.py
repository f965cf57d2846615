"""Handoff notices on moto: schedule writes keep the notice index, and the scheduled step publishes
each person's `oncall.handoff_notice` once, at the right time, with `now` passed in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chalicelib import aws
from chalicelib.directory import users
from chalicelib.errors import ValidationFailed
from chalicelib.oncall import Layer
from chalicelib.oncall import handoff_notices as notices
from chalicelib.oncall import service as schedules
from chalicelib.oncall.tables import NOTICE_SHARD, ScheduleRecord
from chalicelib.queue.messages import EVENTS_QUEUE, Message
from chalicelib.workers import scheduled
from tests.conftest import NOW

MONDAY = datetime(2026, 11, 16, 8, 0, tzinfo=UTC)  # 09:00 in Europe/Berlin; NOW is Sunday 22 Nov
HANDOFF = MONDAY + timedelta(days=7)  # alice -> bob
NEXT_HANDOFF = HANDOFF + timedelta(days=7)  # bob -> alice
MINUTE = timedelta(minutes=1)


@pytest.fixture
def people(org):
    oid = org.organization_id
    made = {
        name: users.create_user(organization_id=oid, name=name.title(), email=f"{name}@example.com", now=NOW)
        for name in ("alice", "bob", "dave")
    }
    drain()  # their console invitations (directory.user_created): setup, not the notices under test
    return {name: user.user_id for name, user in made.items()}


def weekly(people: dict[str, str]) -> Layer:
    return Layer("lyr_week", "Weekly", (people["alice"], people["bob"]), "weekly", "09:00", MONDAY)


def make(org, people, **changes: Any) -> schedules.StoredSchedule:
    values: dict[str, Any] = {
        "organization_id": org.organization_id,
        "name": "Primary",
        "time_zone": "Europe/Berlin",
        "layers": [weekly(people)],
        "now": NOW,
    }
    values.update(changes)
    return schedules.create_schedule(**values)


def record_of(stored: schedules.StoredSchedule) -> ScheduleRecord:
    return ScheduleRecord.get(stored.organization_id, stored.schedule_id, consistent_read=True)


def index_of(stored: schedules.StoredSchedule) -> tuple[str | None, datetime | None, datetime | None]:
    record = record_of(stored)
    return record.notice_shard, record.next_notice_at, record.notice_boundary


def drain() -> list[Message]:
    sqs = aws.client("sqs")
    url = aws.queue_url(EVENTS_QUEUE)
    found = []
    for _ in range(5):
        received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
        for raw in received:
            found.append(Message.from_json(raw["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=raw["ReceiptHandle"])
    return found


def told(messages: list[Message]) -> set[tuple[str, str, str]]:
    found = [(m.payload["user_id"], m.payload["kind"], m.payload["at"]) for m in messages]
    assert len(set(found)) == len(found), "told twice"
    return set(found)


# --- the index follows every write --------------------------------------------------------------


def test_writes_plan_the_next_notice(org, people):
    oid = org.organization_id
    created = make(org, people)
    assert created.handoff_notice_lead_minutes == 0
    assert index_of(created) == (NOTICE_SHARD, HANDOFF, HANDOFF)

    later = NOW + timedelta(hours=1)
    updated = schedules.update_schedule(
        organization_id=oid, schedule_id=created.schedule_id, now=later, handoff_notice_lead_minutes=30
    )
    assert updated.handoff_notice_lead_minutes == 30
    assert index_of(created) == (NOTICE_SHARD, HANDOFF - 30 * MINUTE, HANDOFF)

    # An override for dave from 20:00Z today: the next boundary is its start.
    _, override = schedules.add_override(
        organization_id=oid,
        schedule_id=created.schedule_id,
        user_id=people["dave"],
        start=NOW + timedelta(hours=8),
        end=NOW + timedelta(hours=10),
        now=later,
    )
    assert index_of(created) == (NOTICE_SHARD, NOW + timedelta(hours=8) - 30 * MINUTE, NOW + timedelta(hours=8))

    schedules.remove_override(
        organization_id=oid, schedule_id=created.schedule_id, override_id=override.override_id, now=later
    )
    assert index_of(created) == (NOTICE_SHARD, HANDOFF - 30 * MINUTE, HANDOFF)

    # The layers replaced: a one-member layer has no boundary within 35 days; look again then.
    solo = Layer("lyr_solo", "Solo", (people["alice"],), "weekly", "09:00", MONDAY)
    schedules.update_schedule(organization_id=oid, schedule_id=created.schedule_id, now=later, layers=[solo])
    assert index_of(created) == (NOTICE_SHARD, later + timedelta(days=35) - 30 * MINUTE, None)


@pytest.mark.parametrize("lead", [-1, 1441, True])
def test_the_lead_is_0_to_1440_minutes(org, people, lead):
    with pytest.raises(ValidationFailed) as caught:
        make(org, people, handoff_notice_lead_minutes=lead)
    assert caught.value.details == {
        "fields": [{"field": "handoff_notice_lead_minutes", "message": "must be 0 to 1440 minutes"}]
    }
    created = make(org, people, handoff_notice_lead_minutes=1440)
    with pytest.raises(ValidationFailed):
        schedules.update_schedule(
            organization_id=org.organization_id,
            schedule_id=created.schedule_id,
            now=NOW,
            handoff_notice_lead_minutes=lead,
        )
    assert record_of(created).handoff_notice_lead_minutes == 1440


# --- the scheduled step ------------------------------------------------------------------------


def test_a_person_with_a_zone_of_their_own_reads_the_times_in_it(org, people):
    users.update_user(organization_id=org.organization_id, user_id=people["bob"], now=NOW, time_zone="America/New_York")
    # The organization's zone is not a person's own: alice keeps the schedule's.
    from chalicelib.organization.service import set_time_zone

    set_time_zone(organization_id=org.organization_id, time_zone="Asia/Tokyo")
    make(org, people)
    notices.send_due_notices(now=HANDOFF + timedelta(seconds=20))
    off, on = sorted(drain(), key=lambda m: m.payload["kind"])
    assert on.payload["user_id"] == people["bob"]
    assert on.payload["subject"] == "You are on call for Primary from Mon 23 Nov 03:00 (America/New_York)"
    assert on.payload["text"] == (
        "You are on call for the schedule Primary.\nFrom: Mon 23 Nov 2026 03:00 EST\n"
        "Until: Mon 30 Nov 2026 03:00 EST\nTimes are in America/New_York."
    )
    assert on.payload["short_text"].endswith("from Mon 23 Nov 03:00 to Mon 30 Nov 03:00 (America/New_York).")
    assert on.payload["time_zone"] == "Europe/Berlin"  # the schedule's, as the message always said
    assert off.payload["subject"] == "You are off call for Primary from Mon 23 Nov 09:00 (Europe/Berlin)"


def test_notices_go_out_at_the_boundary_once(org, people):
    created = make(org, people)
    assert notices.send_due_notices(now=HANDOFF - MINUTE) == notices.NoticeRun()
    assert drain() == []

    run = notices.send_due_notices(now=HANDOFF + timedelta(seconds=20))
    assert (run.boundaries, run.published, run.late, run.lost, run.failed) == (1, 2, 0, 0, 0)
    off, on = sorted(drain(), key=lambda m: m.payload["kind"])
    assert (off.message_type, off.organization_id) == ("oncall.handoff_notice", org.organization_id)
    assert on.payload == {
        "user_id": people["bob"],
        "schedule_id": created.schedule_id,
        "schedule_name": "Primary",
        "kind": "on_call",
        "at": "2026-11-23T08:00:00Z",
        "shift_ends_at": "2026-11-30T08:00:00Z",
        "time_zone": "Europe/Berlin",
        "notice_id": f"{created.schedule_id}#2026-11-23T08:00:00Z#{people['bob']}#on_call",
        "subject": "You are on call for Primary from Mon 23 Nov 09:00 (Europe/Berlin)",
        "text": "You are on call for the schedule Primary.\nFrom: Mon 23 Nov 2026 09:00 CET\n"
        "Until: Mon 30 Nov 2026 09:00 CET\nTimes are in Europe/Berlin.",
        "short_text": "Tocsin: you are on call for Primary from Mon 23 Nov 09:00 to Mon 30 Nov 09:00 (Europe/Berlin).",
    }
    assert (off.payload["user_id"], off.payload["kind"], off.payload["shift_ends_at"]) == (
        people["alice"],
        "off_call",
        None,
    )
    assert off.payload["notice_id"] == f"{created.schedule_id}#2026-11-23T08:00:00Z#{people['alice']}#off_call"
    assert index_of(created) == (NOTICE_SHARD, NEXT_HANDOFF, NEXT_HANDOFF)

    # Later runs before the next boundary: nothing again.
    assert notices.send_due_notices(now=HANDOFF + MINUTE) == notices.NoticeRun()
    assert notices.send_due_notices(now=HANDOFF + timedelta(hours=2)) == notices.NoticeRun()
    assert drain() == []
    # The step's bookkeeping never bumps the version an editor holds.
    assert record_of(created).version == created.version


def test_the_lead_sends_ahead_of_the_boundary(org, people):
    make(org, people, handoff_notice_lead_minutes=90)
    assert notices.send_due_notices(now=HANDOFF - 91 * MINUTE).published == 0
    assert notices.send_due_notices(now=HANDOFF - 90 * MINUTE).published == 2
    assert told(drain()) == {
        (people["alice"], "off_call", "2026-11-23T08:00:00Z"),
        (people["bob"], "on_call", "2026-11-23T08:00:00Z"),
    }


def test_a_concurrent_run_that_read_the_same_record_publishes_nothing(org, people):
    created = make(org, people)
    now = HANDOFF + MINUTE
    first, second = record_of(created), record_of(created)  # two runs, both read before either wrote
    run_a, run_b = notices.NoticeRun(), notices.NoticeRun()
    assert notices._step(first, now, run_a) is True
    assert notices._step(second, now, run_b) is False
    assert (run_a.published, run_b.published, run_b.lost) == (2, 0, 1)
    assert len(drain()) == 2
    assert index_of(created) == (NOTICE_SHARD, NEXT_HANDOFF, NEXT_HANDOFF)


def test_a_failed_publish_is_retried_after_the_lease(org, people, monkeypatch):
    created = make(org, people)

    def broken(message: Message) -> None:
        raise RuntimeError("SQS is down")

    other = make(org, people, name="Other")
    monkeypatch.setattr(notices, "publish", broken)
    run = notices.send_due_notices(now=HANDOFF)
    assert (run.published, run.failed) == (0, 2)  # each schedule on its own: one failure stops no other
    assert index_of(created) == (NOTICE_SHARD, HANDOFF + notices.LEASE, HANDOFF)  # claimed, not advanced
    monkeypatch.undo()

    assert notices.send_due_notices(now=HANDOFF + MINUTE) == notices.NoticeRun()  # the claim still stands
    assert notices.send_due_notices(now=HANDOFF + notices.LEASE).published == 4
    assert len(drain()) == 4
    assert index_of(created) == index_of(other) == (NOTICE_SHARD, NEXT_HANDOFF, NEXT_HANDOFF)


def test_boundaries_long_past_are_skipped_without_notices(org, people):
    created = make(org, people)
    # The step did not run for two weeks: the boundaries of 23 and 30 Nov are long past.
    run = notices.send_due_notices(now=NEXT_HANDOFF + timedelta(hours=2))
    assert (run.published, run.late) == (0, 1)
    assert drain() == []
    assert index_of(created)[1:] == (NEXT_HANDOFF + timedelta(days=7), NEXT_HANDOFF + timedelta(days=7))
    # Less than an hour late still counts.
    make(org, people, name="Secondary")
    assert notices.send_due_notices(now=HANDOFF + timedelta(minutes=59)).published == 2


def test_an_edit_while_a_notice_is_due_keeps_it(org, people):
    created = make(org, people)
    # The handoff has come, the step has not run yet, and someone renames the schedule.
    schedules.update_schedule(
        organization_id=org.organization_id,
        schedule_id=created.schedule_id,
        now=HANDOFF + timedelta(seconds=30),
        name="Payments",
    )
    assert index_of(created) == (NOTICE_SHARD, HANDOFF, HANDOFF)
    assert notices.send_due_notices(now=HANDOFF + MINUTE).published == 2
    assert {m.payload["schedule_name"] for m in drain()} == {"Payments"}


def test_an_editor_holding_the_version_read_before_the_step_is_not_refused(org, people):
    created = make(org, people)
    notices.send_due_notices(now=HANDOFF)
    updated = schedules.update_schedule(
        organization_id=org.organization_id,
        schedule_id=created.schedule_id,
        now=HANDOFF + MINUTE,
        expected_version=created.version,
        name="Renamed",
    )
    assert updated.version == created.version + 1


def test_a_deleted_schedule_is_skipped(org, people, monkeypatch):
    gone, kept = make(org, people, name="Gone"), make(org, people, name="Kept")
    # The index still lists the deleted one (its Query ran before the delete reached the index).
    keys = list(ScheduleRecord.by_next_notice.query(NOTICE_SHARD, ScheduleRecord.next_notice_at <= HANDOFF))
    schedules.delete_schedule(organization_id=org.organization_id, schedule_id=gone.schedule_id, used_by_policies=[])
    monkeypatch.setattr(ScheduleRecord.by_next_notice, "query", lambda *args, **kwargs: iter(keys))
    run = notices.send_due_notices(now=HANDOFF)
    assert (run.boundaries, run.published) == (1, 2)
    assert {m.payload["schedule_id"] for m in drain()} == {kept.schedule_id}


def test_an_override_is_told_to_the_people_it_moves(org, people):
    created = make(org, people)
    start, end = NOW + timedelta(hours=8), NOW + timedelta(hours=10)
    schedules.add_override(
        organization_id=org.organization_id,
        schedule_id=created.schedule_id,
        user_id=people["dave"],
        start=start,
        end=end,
        now=NOW,
    )
    notices.send_due_notices(now=start)
    assert told(drain()) == {
        (people["alice"], "off_call", "2026-11-22T20:00:00Z"),
        (people["dave"], "on_call", "2026-11-22T20:00:00Z"),
    }
    notices.send_due_notices(now=end)
    messages = drain()
    assert told(messages) == {
        (people["alice"], "on_call", "2026-11-22T22:00:00Z"),
        (people["dave"], "off_call", "2026-11-22T22:00:00Z"),
    }
    back = next(m for m in messages if m.payload["kind"] == "on_call")
    assert back.payload["shift_ends_at"] == "2026-11-23T08:00:00Z"  # the rest of alice's week


def test_the_scheduled_entry_point_fails_loudly_after_a_failed_schedule(org, people, monkeypatch):
    from chalicelib import clock

    created = make(org, people)
    record = record_of(created)
    record.layers = [{"layer_id": "broken"}]  # unreadable: this schedule fails, the run goes on
    record.save()
    fine = make(org, people, name="Fine")
    with clock.frozen(HANDOFF), pytest.raises(notices.HandoffNoticesFailed, match="1 schedule"):
        scheduled.send_handoff_notices({})
    assert {m.payload["schedule_id"] for m in drain()} == {fine.schedule_id}


def test_the_scheduled_entry_point_reads_the_clock(org, people):
    from chalicelib import clock

    make(org, people)
    with clock.frozen(HANDOFF):
        assert scheduled.send_handoff_notices({"detail-type": "Scheduled Event"}) == {
            "boundaries": 1,
            "published": 2,
            "late": 0,
            "lost": 0,
            "failed": 0,
        }


def test_the_local_runner_calls_the_handoff_step_like_eventbridge(org, people):
    import threading

    from chalice.app import ScheduledEventConfig

    from app import app
    from chalicelib import clock
    from chalicelib.local.worker_loop import ScheduleWorker

    make(org, people)
    [config] = [
        s for s in app.event_sources if isinstance(s, ScheduledEventConfig) and s.name == "send-handoff-notices"
    ]
    stop = threading.Event()
    stop.set()  # build the worker without starting a loop that outlives the test
    with clock.frozen(HANDOFF):
        assert ScheduleWorker(config, stop, interval=15).run_once()["published"] == 2
    assert len(drain()) == 2
