"""Status page followers: what a public change costs to announce, and what the uptime bars cost.

    .venv/bin/python bench/status_followers.py [--followers 200] [--changes 0 1000 10000]

Runs in-process on moto (no network, no AWS account). Seeds a status page with --followers
confirmed email subscribers (as the subscribe flow leaves them: subscriber and address guard),
opens a public incident, takes the `status_page.incident_updated` message it published from the
events queue and times:

- the fan-out (one Query of the page's subscribers, one `status_page.notice_batch` message per
  50 interested followers);
- one batch of 50: re-read, claim each (subscriber, notice), render, SES SendRawEmail, record;
- a redelivery of that batch (every claim found: nothing is sent twice).

Then the pure uptime rule (chalicelib/statuspage/uptime.py) for one component's 90 days with
--changes status changes spread over them, and the public uptime.json document for the page.

Prints figures only; never fails on them, always exits 0.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._support import configure_environment, moto_account, table  # noqa: E402
from chalicelib.queue.messages import Message  # noqa: E402
from chalicelib.settings import get_settings  # noqa: E402

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
STATUSES = ("degraded_performance", "operational", "partial_outage", "operational", "major_outage", "operational")


def _seconds(started: float) -> float:
    return time.perf_counter() - started


def _seed_page(followers: int) -> tuple[str, str]:
    """(page id, the component every follower hears about), with `followers` confirmed followers."""
    from chalicelib.statuspage import pages, structure
    from chalicelib.statuspage.repository import item_id
    from chalicelib.subscriber.tables import CONFIRMED, EMAIL, EMAIL_GUARD_PREFIX, SubscriberItem, subscriber_key

    page = pages.create_page(organization_id="org-bench", name="Bench Cloud", slug="bench", now=NOW)
    section = structure.create_section(page_id=page.page_id, name="Core", now=NOW)
    component = structure.create_component(
        page_id=page.page_id, section_id=item_id(section), group_id=None, name="API", status="operational", now=NOW
    )
    with SubscriberItem.batch_write() as batch:
        for number in range(followers):
            subscriber_id = f"sub_{number:024x}"
            address = f"reader{number}@example.com"
            batch.save(
                SubscriberItem(
                    page.page_id,
                    subscriber_key(subscriber_id),
                    subscriber_id=subscriber_id,
                    organization_id="org-bench",
                    kind=EMAIL,
                    email=address,
                    component_ids=[],
                    status=CONFIRMED,
                    created_at=NOW - timedelta(days=1),
                    confirmed_at=NOW - timedelta(days=1),
                )
            )
            batch.save(SubscriberItem(page.page_id, EMAIL_GUARD_PREFIX + address, subscriber_id=subscriber_id))
    return page.page_id, item_id(component)


def _take(message_type: str) -> list[Message]:
    """Every message of that type waiting on the events queue (received and deleted)."""
    from chalicelib import aws
    from chalicelib.queue.messages import EVENTS_QUEUE

    sqs, url = aws.client("sqs"), aws.queue_url(EVENTS_QUEUE)
    found: list[Message] = []
    while True:
        answer = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
        records = answer.get("Messages", [])
        if not records:
            return found
        for record in records:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=record["ReceiptHandle"])
            message = Message.from_json(record["Body"])
            if message.message_type == message_type:
                found.append(message)


def notices(followers: int) -> list[list[str]]:
    from chalicelib import clock
    from chalicelib.statuspage import incidents
    from chalicelib.subscriber import notices as notice_service

    page_id, component_id = _seed_page(followers)
    _take("status_page.incident_updated")  # the seeding's own messages, if any
    with clock.frozen(NOW):
        incidents.create_incident(
            organization_id="org-bench",
            page_id=page_id,
            title="Slow API",
            status="investigating",
            impact="minor",
            body="We are looking into slow responses.",
            component_ids=[component_id],
            incident_number=None,
            now=NOW,
            settings=get_settings(),
        )
    (change,) = _take("status_page.incident_updated")
    started = time.perf_counter()
    batches = notice_service.fan_out(change)
    fan_out = _seconds(started)
    published = _take(notice_service.NOTICE_BATCH)
    started = time.perf_counter()
    result = notice_service.send_batch(published[0], now=NOW, settings=get_settings())
    one_batch = _seconds(started)
    started = time.perf_counter()
    again = notice_service.send_batch(published[0], now=NOW, settings=get_settings())
    redelivery = _seconds(started)
    return [
        [f"fan-out of {followers} followers", f"{fan_out:.3f} s", f"{batches} batch messages"],
        [
            "one batch of 50 emails",
            f"{one_batch:.3f} s",
            f"{one_batch / max(result.emailed, 1) * 1000:.0f} ms a follower, {result.emailed} emailed",
        ],
        [
            "the same batch redelivered",
            f"{redelivery:.3f} s",
            f"{again.emailed} emailed again, {again.already_claimed} already claimed",
        ],
    ]


def uptime(change_counts: list[int]) -> list[list[str]]:
    from chalicelib.statuspage import uptime as rules

    rows = []
    start = rules.window_start(NOW)
    span = NOW - start
    for count in change_counts:
        changes = [
            rules.StatusChange(
                at=start + span * (index + 1) / (count + 1),
                previous=STATUSES[index % len(STATUSES) - 1] if index else "operational",
                status=STATUSES[index % len(STATUSES)],
            )
            for index in range(count)
        ]
        started = time.perf_counter()
        result = rules.daily_uptime(
            now=NOW, created_at=start - timedelta(days=1), current_status="operational", changes=changes
        )
        elapsed = _seconds(started)
        rows.append([f"90 days, {count} changes", f"{elapsed * 1000:.1f} ms", f"{result.uptime_percent} %"])
    return rows


def uptime_document() -> list[str]:
    from chalicelib.statuspage import public
    from chalicelib.statuspage.uptime_public import document

    view = public.load_view("bench")
    assert view is not None
    started = time.perf_counter()
    found = document(view, NOW)
    elapsed = _seconds(started)
    return ["uptime.json of the page", f"{elapsed * 1000:.1f} ms", f"{len(found['components'])} component(s)"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--followers", type=int, default=200)
    parser.add_argument("--changes", type=int, nargs="*", default=[0, 1000, 10000])
    arguments = parser.parse_args()
    configure_environment()
    with moto_account():
        rows = notices(arguments.followers)
        rows += uptime(arguments.changes)
        rows.append(uptime_document())
    print(table(["what", "time", "detail"], rows, right=frozenset({1})))


if __name__ == "__main__":
    main()
