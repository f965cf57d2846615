"""Subscriber notices on moto: public changes reach the confirmed subscribers they concern, once,
by email (raw MIME with the unsubscribe headers) in batches; redeliveries send nothing twice."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.queue.messages import Message
from chalicelib.settings import get_settings
from chalicelib.statuspage import incidents, scheduled_maintenance
from chalicelib.statuspage.repository import item_id
from chalicelib.statuspage.tables import StatusPageItem
from chalicelib.subscriber import links, notice_email, notices
from chalicelib.subscriber.notice_content import notice_id
from chalicelib.subscriber.tables import PENDING, SubscriberItem, notice_key
from chalicelib.workers import dispatch
from tests.conftest import NOW, Org
from tests.service.outbound_fakes import RecordingSqs, record_published_messages, run_queue
from tests.service.subscriber_fakes import (
    Page,
    add_subscriber,
    html_of,
    make_page,
    raw_emails,
    recipients,
    stored,
    text_of,
)


@pytest.fixture
def sqs(org: Org) -> RecordingSqs:
    return record_published_messages()


@pytest.fixture
def page(org: Org, sqs: RecordingSqs) -> Page:
    return make_page(org)


def schedule(page: Page, title: str) -> StatusPageItem:
    """A window over the API component, an hour from NOW for an hour (the clock frozen by the caller)."""
    return scheduled_maintenance.create_window(
        page_id=page.page_id,
        title=title,
        scheduled_start=NOW + timedelta(hours=1),
        scheduled_end=NOW + timedelta(hours=2),
        component_ids=[page.api],
        now=NOW,
        settings=get_settings(),
    )


def open_incident(org: Org, page: Page, components: list[str], title: str = "Slow checkout") -> str:
    with clock.frozen(NOW):
        item = incidents.create_incident(
            organization_id=org.organization_id,
            page_id=page.page_id,
            title=title,
            status="investigating",
            impact="minor",
            body="We are looking into slow payments.",
            component_ids=components,
            incident_number=None,
            now=NOW,
            settings=get_settings(),
        )
    return item_id(item)


def update(page: Page, incident_id: str, status: str, body: str) -> None:
    with clock.frozen(NOW):
        incidents.add_update(
            page_id=page.page_id, incident_id=incident_id, status=status, body=body, now=NOW, settings=get_settings()
        )


def deliver_all(sqs: RecordingSqs) -> list[str]:
    """Run everything published so far (and what that publishes); the message types handled."""
    return [message.message_type for _, message, _ in run_queue(sqs, NOW + timedelta(hours=4))]


def test_confirmed_subscribers_of_the_touched_components_hear_of_a_new_incident(
    org: Org, page: Page, sqs: RecordingSqs
) -> None:
    add_subscriber(org, page, "sub_all")
    add_subscriber(org, page, "sub_checkout", components=[page.checkout])
    add_subscriber(org, page, "sub_api", components=[page.api])
    add_subscriber(org, page, "sub_pending", status=PENDING)
    open_incident(org, page, [page.checkout])
    handled = deliver_all(sqs)
    assert handled.count("status_page.notice_batch") == 1
    sent = raw_emails()
    assert recipients(sent) == ["sub_all@example.com", "sub_checkout@example.com"]
    message = next(m for m in sent if m["To"] == "sub_checkout@example.com")
    assert message["Subject"] == "[Acme Cloud] Investigating: Slow checkout"
    assert message["From"] == "Acme Cloud status <tocsin@localhost.localdomain>"
    # The one-click unsubscribe link is signed for this subscriber of this page.
    url = message["List-Unsubscribe"].strip().removeprefix("<").removesuffix(">")
    assert url.startswith("http://127.0.0.1:8000/status/acme/unsubscribe?token=")
    link = links.verify(url.split("token=", 1)[1], "unsubscribe", settings=get_settings())
    assert (link.page_id, link.subscriber_id) == (page.page_id, "sub_checkout")
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    text = text_of(message)
    assert "Status: Investigating\nAffected: Checkout\n\nWe are looking into slow payments.\n" in text
    assert "subscribed to updates about Checkout on the Acme Cloud status page" in text
    assert f"Unsubscribe: {url}" in text and "View the status page: http://127.0.0.1:8000/status/acme" in text
    assert f'href="{url}"' in html_of(message)


def test_a_follower_confirmed_after_the_change_does_not_hear_of_it(org: Org, page: Page, sqs: RecordingSqs) -> None:
    add_subscriber(org, page, "sub_before")
    open_incident(org, page, [page.checkout])  # queued; not told yet
    late = add_subscriber(org, page, "sub_after")
    late.update(actions=[SubscriberItem.confirmed_at.set(clock.now() + timedelta(minutes=1))])
    deliver_all(sqs)
    assert recipients(raw_emails()) == ["sub_before@example.com"]


def test_a_change_dated_in_the_past_is_not_told_to_who_confirmed_since(org: Org, page: Page, sqs: RecordingSqs) -> None:
    """A change is dated by the write's own `now`, not by when it was published: history recorded
    for weeks ago (an import, the demo's past outages) reaches nobody who followed the page later."""
    add_subscriber(org, page, "sub_old")  # confirmed at NOW
    # The wall clock runs (not frozen at NOW); the change says it happened a week before NOW.
    clock.freeze(None)
    incidents.create_incident(
        organization_id=org.organization_id,
        page_id=page.page_id,
        title="Last week's outage",
        status="resolved",
        impact="major",
        body="Recorded afterwards.",
        component_ids=[page.checkout],
        incident_number=None,
        now=NOW - timedelta(days=7),
        settings=get_settings(),
    )
    (change,) = [message for message, _, _ in sqs.sent if message.message_type == "status_page.incident_updated"]
    assert change.occurred_at == "2026-11-15T12:00:00.000Z"
    deliver_all(sqs)
    assert raw_emails() == []


def test_updates_and_the_resolution_are_told_with_their_own_words(org: Org, page: Page, sqs: RecordingSqs) -> None:
    add_subscriber(org, page, "sub_all")
    incident_id = open_incident(org, page, [page.checkout])
    update(page, incident_id, "identified", "A bad deploy; rolling back.")
    update(page, incident_id, "resolved", "Payments are fast again.")
    deliver_all(sqs)
    subjects = [str(m["Subject"]) for m in raw_emails()]
    assert subjects == [
        "[Acme Cloud] Investigating: Slow checkout",
        "[Acme Cloud] Identified: Slow checkout",
        "[Acme Cloud] Resolved: Slow checkout",
    ]
    assert "Status: Resolved" in text_of(raw_emails()[-1]) and "Payments are fast again." in text_of(raw_emails()[-1])


def test_an_incident_naming_no_component_reaches_every_confirmed_subscriber(
    org: Org, page: Page, sqs: RecordingSqs
) -> None:
    add_subscriber(org, page, "sub_api", components=[page.api])
    open_incident(org, page, [])
    deliver_all(sqs)
    assert recipients(raw_emails()) == ["sub_api@example.com"]


def test_redelivered_messages_send_nothing_twice(org: Org, page: Page, sqs: RecordingSqs) -> None:
    add_subscriber(org, page, "sub_a")
    add_subscriber(org, page, "sub_b")
    open_incident(org, page, [page.checkout])
    (change,) = [message for message, _, _ in sqs.take("status_page.incident_updated")]
    for _ in range(2):  # SQS delivers the public change twice
        notices.fan_out(change)
    batches = [message for message, _, _ in sqs.take("status_page.notice_batch")]
    assert len(batches) == 2 and batches[0].payload == batches[1].payload
    results = [notices.send_batch(batch, now=NOW, settings=get_settings()) for batch in batches * 2]
    assert [r.emailed for r in results] == [2, 0, 0, 0]
    assert [r.already_claimed for r in results] == [0, 2, 2, 2]
    assert recipients(raw_emails()) == ["sub_a@example.com", "sub_b@example.com"]
    claim = stored(page, notice_key(notice_id(change.message_id), "sub_a"))
    assert claim is not None and claim.delivery_status == "sent" and claim.event_type == "incident.created"


def test_big_pages_are_told_in_batches(
    org: Org, page: Page, sqs: RecordingSqs, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert notices.BATCH_SIZE == 50  # in production; 10 here, so the test writes 25 subscribers, not 120
    monkeypatch.setattr(notices, "BATCH_SIZE", 10)
    for n in range(25):
        add_subscriber(org, page, f"sub_{n:03d}")
    open_incident(org, page, [page.checkout])
    (change,) = [message for message, _, _ in sqs.take("status_page.incident_updated")]
    assert notices.fan_out(change) == 3
    batches = [message for message, _, _ in sqs.take("status_page.notice_batch")]
    assert [len(b.payload["subscriber_ids"]) for b in batches] == [10, 10, 5]
    assert sorted(s for b in batches for s in b.payload["subscriber_ids"]) == [f"sub_{n:03d}" for n in range(25)]
    for batch in batches:
        assert notices.send_batch(batch, now=NOW, settings=get_settings()).emailed == len(
            batch.payload["subscriber_ids"]
        )
    assert len(raw_emails()) == 25


def test_who_left_or_changed_their_components_after_the_fan_out_is_not_told(
    org: Org, page: Page, sqs: RecordingSqs
) -> None:
    add_subscriber(org, page, "sub_leaves")
    narrowing = add_subscriber(org, page, "sub_narrows")
    add_subscriber(org, page, "sub_stays")
    open_incident(org, page, [page.checkout])
    (change,) = [message for message, _, _ in sqs.take("status_page.incident_updated")]
    notices.fan_out(change)
    stored(page, "SUB#sub_leaves").delete()  # type: ignore[union-attr]
    narrowing.update(actions=[type(narrowing).component_ids.set([page.api])])
    (batch,) = [message for message, _, _ in sqs.take("status_page.notice_batch")]
    result = notices.send_batch(batch, now=NOW, settings=get_settings())
    assert (result.emailed, result.skipped) == (1, 2)
    assert recipients(raw_emails()) == ["sub_stays@example.com"]


def test_a_passing_ses_failure_retries_only_the_unsent(
    org: Org, page: Page, sqs: RecordingSqs, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_subscriber(org, page, "sub_a")
    add_subscriber(org, page, "sub_b")
    add_subscriber(org, page, "sub_rejected")
    real_send = notice_email.send
    throttled = {"sub_b@example.com"}

    def flaky_send(raw: bytes, *, sender: str, to: str, client: Any = None) -> notice_email.SendOutcome:
        if to in throttled:
            throttled.discard(to)
            return notice_email.SendOutcome("retry", "SES_Throttling")
        if to == "sub_rejected@example.com":
            return notice_email.SendOutcome("refused", "SES_MessageRejected")
        return real_send(raw, sender=sender, to=to, client=client)

    monkeypatch.setattr(notice_email, "send", flaky_send)
    open_incident(org, page, [page.checkout])
    (change,) = [message for message, _, _ in sqs.take("status_page.incident_updated")]
    notices.fan_out(change)
    (batch,) = [message for message, _, _ in sqs.take("status_page.notice_batch")]
    # Through the dispatcher: the batch fails, so SQS delivers it again.
    record = {"messageId": "sqs-1", "body": batch.to_json()}
    with clock.frozen(NOW):
        assert dispatch.handle_records([record]) == {"batchItemFailures": [{"itemIdentifier": "sqs-1"}]}
    assert recipients(raw_emails()) == ["sub_a@example.com"]
    rejected = stored(page, notice_key(notice_id(change.message_id), "sub_rejected"))
    assert rejected is not None and (rejected.delivery_status, rejected.last_error) == ("failed", "SES_MessageRejected")
    assert stored(page, notice_key(notice_id(change.message_id), "sub_b")) is None  # released: not sent
    with clock.frozen(NOW):
        assert dispatch.handle_records([record]) == {"batchItemFailures": []}
    assert recipients(raw_emails()) == ["sub_a@example.com", "sub_b@example.com"]


def test_on_the_last_receive_a_passing_failure_is_recorded_not_retried(
    org: Org, page: Page, sqs: RecordingSqs, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_subscriber(org, page, "sub_a")
    monkeypatch.setattr(notice_email, "send", lambda raw, **_: notice_email.SendOutcome("retry", "SES_Throttling"))
    open_incident(org, page, [page.checkout])
    (change,) = [message for message, _, _ in sqs.take("status_page.incident_updated")]
    notices.fan_out(change)
    (batch,) = [message for message, _, _ in sqs.take("status_page.notice_batch")]
    last = Message.from_json(batch.to_json(), receive_count=5)
    assert notices.send_batch(last, now=NOW, settings=get_settings()).refused == 1
    claim = stored(page, notice_key(notice_id(change.message_id), "sub_a"))
    assert claim is not None and claim.delivery_status == "failed"


def test_a_deleted_page_tells_nobody(org: Org, page: Page, sqs: RecordingSqs) -> None:
    from chalicelib.statuspage import pages

    add_subscriber(org, page, "sub_a")
    open_incident(org, page, [page.checkout])
    (change,) = [message for message, _, _ in sqs.take("status_page.incident_updated")]
    notices.fan_out(change)
    pages.delete_page(organization_id=org.organization_id, page_id=page.page_id)
    (batch,) = [message for message, _, _ in sqs.take("status_page.notice_batch")]
    assert notices.send_batch(batch, now=NOW, settings=get_settings()).skipped == 1
    assert raw_emails() == []


def test_a_deleted_pages_followers_are_forgotten_a_minute_later(org: Org, page: Page, sqs: RecordingSqs) -> None:
    from chalicelib.statuspage import pages

    add_subscriber(org, page, "sub_a")
    add_subscriber(org, page, "sub_b", status=PENDING)
    other = make_page(org, slug="other")
    add_subscriber(org, other, "sub_other")
    open_incident(org, page, [page.checkout])
    deliver_all(sqs)  # leaves notice claims (SENT#) in the page's partition too

    def kinds(page_id: str) -> set[str]:
        return {item.item_key.split("#")[0] for item in SubscriberItem.query(page_id)}

    assert kinds(page.page_id) == {"SUB", "ADDR", "SENT"}
    with clock.frozen(NOW):
        pages.delete_page(organization_id=org.organization_id, page_id=page.page_id)
    (forget,) = [sent for sent in sqs.sent if sent[0].message_type == "status_page.deleted"]
    assert forget[0].payload == {"page_id": page.page_id} and forget[1] == 60
    handled = deliver_all(sqs)
    assert handled == ["status_page.deleted"]
    assert kinds(page.page_id) == set()
    assert kinds(other.page_id) == {"SUB", "ADDR"}
    # A redelivery finds nothing left and fails nothing.
    record = {"messageId": "again", "body": forget[0].to_json()}
    assert dispatch.handle_records([record]) == {"batchItemFailures": []}
    assert kinds(page.page_id) == set()


# ---------------------------------------------------------------- maintenance


def test_maintenance_is_told_when_scheduled_started_completed_and_cancelled(
    org: Org, page: Page, sqs: RecordingSqs
) -> None:
    add_subscriber(org, page, "sub_api", components=[page.api])
    add_subscriber(org, page, "sub_checkout", components=[page.checkout])
    with clock.frozen(NOW):
        upgrade = schedule(page, "Database upgrade")
        other = schedule(page, "Cache resize")
        # A new title or new times are not news.
        scheduled_maintenance.update_window(
            page_id=page.page_id, maintenance_id=item_id(upgrade), title="DB upgrade", now=NOW, settings=get_settings()
        )
        scheduled_maintenance.update_window(
            page_id=page.page_id, maintenance_id=item_id(other), status="cancelled", now=NOW, settings=get_settings()
        )
    for moment in (NOW + timedelta(hours=1), NOW + timedelta(hours=2)):
        with clock.frozen(moment):
            scheduled_maintenance.run_scheduler(now=moment, settings=get_settings())
    changes = [m.payload["change"] for m, _, _ in sqs.sent if m.message_type == "status_page.maintenance_changed"]
    assert changes == ["scheduled", "scheduled", "cancelled", "started", "completed"]
    deliver_all(sqs)
    sent = raw_emails()
    assert recipients(sent) == ["sub_api@example.com"] * 5
    assert [str(m["Subject"]) for m in sent] == [
        "[Acme Cloud] Scheduled maintenance: Database upgrade",
        "[Acme Cloud] Scheduled maintenance: Cache resize",
        "[Acme Cloud] Maintenance cancelled: Cache resize",
        "[Acme Cloud] Maintenance in progress: DB upgrade",
        "[Acme Cloud] Maintenance completed: DB upgrade",
    ]
    assert "When: Sun 22 Nov 2026, 13:00 to 14:00 UTC\nAffected: API\n" in text_of(sent[0])


def test_new_times_for_an_open_window_are_told_as_rescheduled(org: Org, page: Page, sqs: RecordingSqs) -> None:
    add_subscriber(org, page, "sub_all")
    start, end = NOW + timedelta(hours=1), NOW + timedelta(hours=2)
    with clock.frozen(NOW):
        window = scheduled_maintenance.create_window(
            page_id=page.page_id,
            title="Database upgrade",
            scheduled_start=start,
            scheduled_end=end,
            component_ids=[page.api],
            now=NOW,
            settings=get_settings(),
        )
        window_id = item_id(window)
        # The same times again, or other components: not news.
        scheduled_maintenance.update_window(
            page_id=page.page_id, maintenance_id=window_id, scheduled_end=end, now=NOW, settings=get_settings()
        )
        scheduled_maintenance.update_window(
            page_id=page.page_id,
            maintenance_id=window_id,
            component_ids=[page.api, page.checkout],
            now=NOW,
            settings=get_settings(),
        )
        scheduled_maintenance.update_window(
            page_id=page.page_id,
            maintenance_id=window_id,
            scheduled_end=end + timedelta(hours=1),
            now=NOW,
            settings=get_settings(),
        )
    started_at = start + timedelta(minutes=1)
    with clock.frozen(started_at):
        scheduled_maintenance.run_scheduler(now=started_at, settings=get_settings())
        scheduled_maintenance.update_window(
            page_id=page.page_id,
            maintenance_id=window_id,
            scheduled_end=end + timedelta(hours=2),
            now=started_at,
            settings=get_settings(),
        )
    changes = [m.payload["change"] for m, _, _ in sqs.sent if m.message_type == "status_page.maintenance_changed"]
    assert changes == ["scheduled", "rescheduled", "started", "rescheduled"]
    deliver_all(sqs)
    sent = raw_emails()
    assert [str(m["Subject"]) for m in sent] == [
        "[Acme Cloud] Scheduled maintenance: Database upgrade",
        "[Acme Cloud] Maintenance rescheduled: Database upgrade",
        "[Acme Cloud] Maintenance in progress: Database upgrade",
        "[Acme Cloud] Maintenance rescheduled: Database upgrade",
    ]
    moved = text_of(sent[1])
    assert "Status: Rescheduled\nWhen: Sun 22 Nov 2026, 13:00 to 15:00 UTC\n" in moved
    assert "This maintenance has new times, shown above." in moved
    extended = text_of(sent[3])
    assert "When: Sun 22 Nov 2026, 13:00 to 16:00 UTC" in extended
    assert "under way and has a new end" in extended
    assert "Rescheduled" in html_of(sent[1])


def test_the_workers_follow_every_public_change() -> None:
    import chalicelib.workers.handlers  # noqa: F401  (registers the consumers, as the first batch does)
    from chalicelib.queue.consumers import consumers_of

    assert consumers_of("status_page.incident_updated") == ["outbound.fanout", "subscriber.notices"]
    assert consumers_of("status_page.maintenance_changed") == ["subscriber.notices"]
    assert consumers_of(notices.NOTICE_BATCH) == ["subscriber.notice_batch"]
    assert consumers_of(notices.WEBHOOK_DELIVER) == ["subscriber.webhook_deliver"]
    assert consumers_of("status_page.subscriber_webhook_removed") == ["subscriber.webhook_removed"]
    assert consumers_of("status_page.deleted") == ["subscriber.page_deleted"]


def test_the_local_outbox_shows_notices(org: Org, page: Page, sqs: RecordingSqs) -> None:
    from chalicelib.local import outbox

    add_subscriber(org, page, "sub_all")
    open_incident(org, page, [page.checkout])
    deliver_all(sqs)
    (item,) = outbox.emails()
    assert (item.to, item.subject) == ("sub_all@example.com", "[Acme Cloud] Investigating: Slow checkout")
    assert item.sent_at == "2026-11-22T12:00:00Z"  # the update's <time datetime>
    # The text part as sent (not the HTML made text), and the headers a mail client acts on.
    assert "We are looking into slow payments." in item.text
    assert "Unsubscribe: http://127.0.0.1:8000/status/acme/unsubscribe?token=" in item.text
    assert item.headers is not None and item.headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert item.headers["List-Unsubscribe"].startswith("<http://127.0.0.1:8000/status/acme/unsubscribe?token=")
    assert item.html is not None and item.html.startswith("<!DOCTYPE html>")
    assert item.as_json()["headers"] == item.headers


def test_a_maintenance_notice_is_dated_by_its_date_header_in_the_outbox(
    org: Org, page: Page, sqs: RecordingSqs
) -> None:
    """A maintenance notice has no update time in its body: its Date header dates it, so the outbox
    sorts it among the rest instead of last."""
    from chalicelib.local import outbox

    add_subscriber(org, page, "sub_all")
    with clock.frozen(NOW):
        schedule(page, "Database upgrade")
    deliver_all(sqs)  # each message handled with the clock at the moment it became visible
    (item,) = outbox.emails()
    assert item.subject == "[Acme Cloud] Scheduled maintenance: Database upgrade"
    assert item.sent_at == "2026-11-22T12:00:00.000Z"
    assert raw_emails()[0]["Date"] == "Sun, 22 Nov 2026 12:00:00 +0000"


def test_the_local_outbox_records_a_raw_notice_as_ses_accepted_it(aws_env: None) -> None:
    """Recorded when SES took it (chalicelib/local/outbox_recording.py), under the id SES gave it:
    the local stack never reads the emulator's state back."""
    from chalicelib.local import outbox

    rendered = notice_email.render(
        read_notice_for_outbox(), unsubscribe_url="http://127.0.0.1:8000/status/acme/unsubscribe?token=t"
    )
    raw = notice_email.mime_message(
        rendered, sender="tocsin@localhost.localdomain", to="ann@example.com", page_name="Acme", unsubscribe_url="u"
    )
    outcome = notice_email.send(raw, sender="tocsin@localhost.localdomain", to="ann@example.com")
    assert outcome.result == "sent" and outcome.detail
    (item,) = outbox.emails()
    assert (item.id, item.to, item.subject) == (
        outcome.detail,
        "ann@example.com",
        "[Acme Cloud] Maintenance completed: Upgrade",
    )
    assert "This maintenance is over." in item.text
    assert item.headers is not None and item.headers["List-Unsubscribe"] == "<u>"
    refused = notice_email.send(raw, sender="nobody@unverified.example", to="ann@example.com")
    assert refused.result == "refused" and len(outbox.emails()) == 1  # SES refused it: nothing was sent


def read_notice_for_outbox() -> Any:
    from chalicelib.subscriber.notice_content import read_notice

    subject = {
        "maintenance_id": "mnt_1",
        "title": "Upgrade",
        "status": "completed",
        "scheduled_start": "2026-12-01T02:00:00+00:00",
        "scheduled_end": "2026-12-01T04:00:00+00:00",
        "affected_components": [],
    }
    payload = {
        "status_page": {"page_id": "p", "name": "Acme Cloud", "slug": "acme", "url": "u"},
        "maintenance": subject,
        "change": "completed",
    }
    return read_notice(kind="maintenance", message_id="m", occurred_at="t", payload=payload)
