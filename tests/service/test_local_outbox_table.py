"""The local outbox table (chalicelib/local/outbox_table.py) on moto: every filter a key condition,
each channel capped, lookups by id, and the items of the table's earlier layout dropped once."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib import aws
from chalicelib.local import outbox, outbox_table
from chalicelib.local.outbox_item import CHANNELS, OutboxItem


def item(
    n: int,
    *,
    channel: str = "email",
    to: str = "ana@example.com",
    incident: str | None = "INC-2026-0001",
    sent_at: str | None = "",
) -> OutboxItem:
    return OutboxItem(
        channel=channel,
        to=to,
        subject=f"subject {n}",
        text=f'text {n} with "quotes" and <tags>',
        sent_at=f"2026-11-22T12:00:{n:02d}.000Z" if sent_at == "" else sent_at,
        incident_number=incident,
        id=f"id-{n}",
        html=f"<p>{n}</p>" if channel == "email" else None,
        action_links={} if channel == "email" else None,
    )


class Requests:
    """The DynamoDB operations the outbox makes through the app's client."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()

    def count(self, model: Any, **_: Any) -> None:
        self.seen[model.name] += 1


@pytest.fixture
def requests_made(aws_env: None) -> Iterator[Requests]:
    made = Requests()
    events = aws.client("dynamodb").meta.events
    events.register("before-parameter-build.dynamodb", made.count, unique_id="outbox-requests")
    yield made
    events.unregister("before-parameter-build.dynamodb", unique_id="outbox-requests")


def all_items() -> list[dict[str, Any]]:
    """Every item but the layout mark (which a table provisioned in this test process has)."""
    found = aws.client("dynamodb").scan(TableName=outbox_table.outbox_table_name())["Items"]
    return [raw for raw in found if raw["pk"]["S"] != "layout"]


def test_a_filtered_list_is_one_query_on_a_key_and_keeps_the_order(requests_made: Requests) -> None:
    for n in range(1, 7):
        outbox_table.record(item(n, to="bo@example.com" if n % 2 else "ana@example.com"))
    outbox_table.record(item(7, incident="INC-2026-0002"))
    requests_made.seen.clear()

    listed = outbox.list_outbox(channel="email", incident_number="inc-2026-0001", limit=3)
    assert [i.id for i in listed] == ["id-6", "id-5", "id-4"]
    assert requests_made.seen == Counter({"Query": 1})
    assert listed[0] == item(6)  # as recorded, every field
    assert [i.id for i in outbox.list_outbox(channel="email", to="BO@example.com")] == ["id-5", "id-3", "id-1"]
    both = outbox.list_outbox(channel="email", incident_number="INC-2026-0002", to="ana@example.com")
    assert [i.id for i in both] == ["id-7"]
    assert outbox.list_outbox(channel="email", incident_number="INC-2026-0002", to="bo@example.com") == []
    requests_made.seen.clear()
    assert [i.id for i in outbox.list_outbox(incident_number="INC-2026-0002")] == ["id-7"]
    # One per channel (email, slack, sms, voice, webhook and the six chat and push ones), whatever the table holds.
    assert requests_made.seen == Counter({"Query": len(CHANNELS)}) and len(CHANNELS) == 11


def test_within_one_time_the_later_message_comes_first_and_untimed_ones_last(aws_env: None) -> None:
    outbox_table.record(item(1, channel="sms", sent_at=None, incident=None))
    outbox_table.record(item(2, sent_at="2026-11-22T12:00:00.000Z"))
    outbox_table.record(item(3, channel="sms", sent_at=None, incident=None))
    outbox_table.record(item(4, sent_at="2026-11-22T12:00:00.000Z"))
    outbox_table.record(item(5, channel="slack", sent_at="2026-11-22T12:00:00.000Z"))
    assert [(i.channel, i.id) for i in outbox.list_outbox()] == [
        ("email", "id-4"),
        ("email", "id-2"),
        ("slack", "id-5"),
        ("sms", "id-3"),
        ("sms", "id-1"),
    ]
    assert outbox.list_outbox(channel="sms")[0].sent_at is None


def test_each_channel_keeps_its_newest_messages_and_forgets_every_copy_of_the_rest(aws_env: None) -> None:
    for n in range(1, 6):
        outbox_table.record(item(n, to=f"p{n}@example.com, cc@example.com"), keep=3)
    outbox_table.record(item(1, channel="slack", to="U0ANA"), keep=3)

    assert [i.id for i in outbox_table.query("email", limit=50)] == ["id-5", "id-4", "id-3"]
    assert [i.id for i in outbox_table.query("email", incident_number="INC-2026-0001", limit=50)] == [
        "id-5",
        "id-4",
        "id-3",
    ]
    assert [i.id for i in outbox_table.query("email", to="cc@example.com", limit=50)] == ["id-5", "id-4", "id-3"]
    assert outbox_table.query("email", to="p1@example.com", limit=50) == []
    assert outbox_table.find("email", "id-1") is None and outbox_table.find("email", "id-5") == item(
        5, to="p5@example.com, cc@example.com"
    )
    assert [i.id for i in outbox_table.query("slack", limit=50)] == ["id-1"]  # another channel's count
    # What is left: 3 emails x (main, incident, 2 addresses, id, seq), 1 Slack message x 5, 2 counters.
    assert len(all_items()) == 3 * 6 + 5 + 2


def test_a_call_is_found_by_its_sid_with_two_get_items(requests_made: Requests) -> None:
    for n in range(1, 4):
        outbox_table.record(item(n, channel="voice", to="+15555550100"))
    requests_made.seen.clear()
    found = outbox_table.find("voice", "id-1")
    assert found is not None and found.id == "id-1" and found.text.startswith("text 1")
    assert requests_made.seen == Counter({"GetItem": 2})
    assert outbox_table.find("voice", "id-9") is None and outbox_table.find("email", "id-1") is None


def test_nothing_is_listed_when_the_table_is_missing(aws_env: None) -> None:
    aws.client("dynamodb").delete_table(TableName=outbox_table.outbox_table_name())
    assert outbox.list_outbox() == [] and outbox_table.find("voice", "id-1") is None


def test_the_items_of_the_earlier_layout_are_dropped_once(aws_env: None) -> None:
    client = aws.client("dynamodb")
    table = outbox_table.outbox_table_name()
    client.delete_item(TableName=table, Key={"pk": {"S": "layout"}, "sk": {"S": "version"}})  # a table from before
    outbox_table.record(item(1, channel="slack", to="U0ANA"))
    earlier = [("slack", "2026-11-22T12:00:00.000Z#abc"), ("voice", "2026-11-22T12:00:00.000Z#CAabc")]
    earlier.append(("webhook", "2026-11-22T12:00:00.000Z#def"))
    for pk, sk in earlier:
        client.put_item(TableName=table, Item={"pk": {"S": pk}, "sk": {"S": sk}, "to": {"S": "x"}})
    assert len(outbox_table.query("slack", limit=50)) == 1  # an item no key reaches is never listed

    outbox_table.create_outbox_table()
    keys = {(i["pk"]["S"], i["sk"]["S"]) for i in all_items()}
    assert not keys & set(earlier)
    assert [i.id for i in outbox_table.query("slack", limit=50)] == ["id-1"]
    # Marked: a later start reads one item and deletes nothing, even what looks earlier.
    client.put_item(TableName=table, Item={"pk": {"S": "slack"}, "sk": {"S": "late"}})
    outbox_table.create_outbox_table()
    assert ("slack", "late") in {(i["pk"]["S"], i["sk"]["S"]) for i in all_items()}


def test_a_body_full_of_quotes_as_large_as_the_webhook_sink_takes_is_kept(aws_env: None) -> None:
    body = '"' * (256 * 1024)  # JSON would double it past DynamoDB's 400 KB item: it is kept compressed
    outbox_table.record(OutboxItem("webhook", "demo", None, body, "2026-11-22T12:00:00.000Z", None, "w-1"))
    [kept] = outbox_table.query("webhook", limit=1)
    assert kept.text == body
