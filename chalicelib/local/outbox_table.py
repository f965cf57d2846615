"""The local outbox table, `<prefix>local-outbox`: every message the local stack sent, kept when it left.

It lives on the emulator only (local and test stages): it is not a registered model, so no
deployed stage has it, and the emulator keeps it across restarts like every table
(chalicelib/local/persistence.py). Every read is a Query or GetItem on a key, so the outbox
answers as fast with 10,000 messages kept as with ten. Layout (pk, sk), all strings:

- (<channel>, <sent_at>#<seq>#<id>): the message (`doc`: its JSON as listed, compressed). A
  reverse Query lists a channel newest first: by time, then by the order recorded; a message
  without a time (an SMS) sorts before every time, so last.
- (<channel>#incident#<INC-...>, same sk) and (<channel>#to#<address>, same sk), one per address
  (at most MAX_ADDRESS_COPIES): copies, so the `incident_number` and `to` filters are key conditions.
- (<channel>#id#<id>, "-"): where the message is, by its id (a call's sid, when a key is pressed).
- (<channel>#seq, <seq>): the keys everything one message wrote. Recording message n deletes what
  message n - keep wrote: each channel keeps its newest KEEP_PER_CHANNEL messages.
- (counter, <channel>): the channel's last seq (an atomic ADD); (layout, version): see below.

Tables kept from before this layout hold Slack, voice and webhook items without a seq, which no
key reaches: create_outbox_table deletes them once.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from chalicelib import aws
from chalicelib.local.outbox_item import OutboxItem, address_key
from chalicelib.settings import get_settings

TABLE_SHORT_NAME = "local-outbox"
KEEP_PER_CHANNEL = 2_000
MAX_ADDRESS_COPIES = 10
LAYOUT_VERSION = "2"
_COUNTER = "counter"
_LAYOUT = ("layout", "version")
_EARLIER_PARTITIONS = ("slack", "voice", "webhook")  # what the table held before LAYOUT_VERSION 2
_BATCH = 25  # BatchWriteItem's most requests at once
_PAGE = 100  # a Query page when the answer is filtered after the read
_SEQ_DIGITS = 12
_COMPRESSION = 1  # zlib's fastest: a page email still shrinks about fourfold
_ONLY_THE_DOCUMENT = {"ProjectionExpression": "#doc", "ExpressionAttributeNames": {"#doc": "doc"}}


def outbox_table_name() -> str:
    return get_settings().table_name(TABLE_SHORT_NAME)


def create_outbox_table() -> None:
    """Safe to run again: an existing table is kept (its items from before this layout deleted once)."""
    client = aws.client("dynamodb")
    try:
        client.create_table(
            TableName=outbox_table_name(),
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
    except client.exceptions.ResourceInUseException:
        _drop_earlier_layout(client)
        return
    _mark_layout(client)


# ---------------------------------------------------------------- writing


def record(item: OutboxItem, *, keep: int = KEEP_PER_CHANNEL) -> None:
    """Keep one message; the channel's oldest beyond `keep` goes."""
    client = aws.client("dynamodb")
    table = outbox_table_name()
    counted = client.update_item(
        TableName=table,
        Key=_key(_COUNTER, item.channel),
        UpdateExpression="ADD n :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
        ReturnValues="UPDATED_NEW",
    )
    seq = int(counted["Attributes"]["n"]["N"])
    sort_key = f"{item.sent_at or ''}#{seq:0{_SEQ_DIGITS}d}#{item.id}"
    body = {"seq": {"N": str(seq)}, "doc": {"B": _packed(item)}}
    partitions = [item.channel]
    if item.incident_number:
        partitions.append(f"{item.channel}#incident#{item.incident_number}")
    partitions += [f"{item.channel}#to#{address}" for address in item.recipients()[:MAX_ADDRESS_COPIES]]
    written = [_key(partition, sort_key) for partition in partitions]
    by_id = _key(f"{item.channel}#id#{item.id}", "-")
    pointer = _key(f"{item.channel}#seq", f"{seq:0{_SEQ_DIGITS}d}")
    keys = [[k["pk"]["S"], k["sk"]["S"]] for k in [*written, by_id]]
    puts = [{**key, **body} for key in written]
    puts.append({**by_id, "main": {"S": sort_key}})
    puts.append({**pointer, "keys": {"S": json.dumps(keys)}})
    _batch_write(client, table, [{"PutRequest": {"Item": put}} for put in puts])
    if seq > keep:
        _forget(client, table, item.channel, seq - keep)


def _forget(client: Any, table: str, channel: str, seq: int) -> None:
    """Delete what message `seq` of the channel wrote (nothing if it was never written)."""
    pointer = _key(f"{channel}#seq", f"{seq:0{_SEQ_DIGITS}d}")
    found = client.get_item(TableName=table, Key=pointer).get("Item")
    if found is None:
        return
    keys = [_key(pk, sk) for pk, sk in json.loads(found["keys"]["S"])] + [pointer]
    _batch_write(client, table, [{"DeleteRequest": {"Key": key}} for key in keys])


def _batch_write(client: Any, table: str, requests: list[dict[str, Any]]) -> None:
    for start in range(0, len(requests), _BATCH):
        pending: dict[str, Any] = {table: requests[start : start + _BATCH]}
        for _ in range(5):  # what DynamoDB leaves unprocessed is sent again
            pending = client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
            if not pending:
                break


def _key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


# ---------------------------------------------------------------- reading


def query(channel: str, *, incident_number: str | None = None, to: str | None = None, limit: int) -> list[OutboxItem]:
    """One channel's messages, newest first: one Query of the narrowest partition the filters name
    (with both, the incident's, then the address is checked on each)."""
    wanted = None
    if incident_number:
        partition = f"{channel}#incident#{incident_number.upper()}"
        wanted = address_key(to) if to else None
    elif to:
        partition = f"{channel}#to#{address_key(to)}"
    else:
        partition = channel
    client = aws.client("dynamodb")
    found: list[OutboxItem] = []
    arguments: dict[str, Any] = {
        "TableName": outbox_table_name(),
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": partition}},
        "ScanIndexForward": False,
        "Limit": limit if wanted is None else max(limit, _PAGE),
        **_ONLY_THE_DOCUMENT,
    }
    while True:
        try:
            page = client.query(**arguments)
        except client.exceptions.ResourceNotFoundException:
            return []  # nothing was ever sent
        for raw in page.get("Items", []):
            item = _item(raw)
            if item is not None and (wanted is None or wanted in item.recipients()):
                found.append(item)
                if len(found) == limit:
                    return found
        if not page.get("LastEvaluatedKey"):
            return found
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def find(channel: str, item_id: str) -> OutboxItem | None:
    """One message by its id: two GetItems."""
    client = aws.client("dynamodb")
    table = outbox_table_name()
    try:
        pointer = client.get_item(TableName=table, Key=_key(f"{channel}#id#{item_id}", "-")).get("Item")
    except client.exceptions.ResourceNotFoundException:
        return None
    if pointer is None:
        return None
    raw = client.get_item(TableName=table, Key=_key(channel, pointer["main"]["S"]), **_ONLY_THE_DOCUMENT).get("Item")
    return _item(raw) if raw is not None else None


def _packed(item: OutboxItem) -> bytes:
    """The item's JSON, compressed: one attribute for the emulator to serialize instead of one per field
    (its serializer's cost is per attribute), and a webhook body of quotes stays far below 400 KB."""
    return zlib.compress(json.dumps(item.as_json(), separators=(",", ":")).encode(), _COMPRESSION)


def _item(raw: dict[str, Any]) -> OutboxItem | None:
    if "doc" not in raw:
        return None  # an item from before this layout
    return OutboxItem.from_json(json.loads(zlib.decompress(raw["doc"]["B"])))


# ---------------------------------------------------------------- the layout


def _mark_layout(client: Any) -> None:
    client.put_item(TableName=outbox_table_name(), Item={**_key(*_LAYOUT), "v": {"S": LAYOUT_VERSION}})


def _drop_earlier_layout(client: Any) -> None:
    """Delete, once, the items a table from before LAYOUT_VERSION 2 holds (no key reaches them)."""
    table = outbox_table_name()
    marked = client.get_item(TableName=table, Key=_key(*_LAYOUT)).get("Item")
    if marked is not None and marked["v"]["S"] == LAYOUT_VERSION:
        return
    for partition in _EARLIER_PARTITIONS:
        arguments: dict[str, Any] = {
            "TableName": table,
            "KeyConditionExpression": "pk = :pk",
            "FilterExpression": "attribute_not_exists(seq)",
            "ProjectionExpression": "pk, sk",
            "ExpressionAttributeValues": {":pk": {"S": partition}},
        }
        while True:
            page = client.query(**arguments)
            stale = [{"DeleteRequest": {"Key": _key(i["pk"]["S"], i["sk"]["S"])}} for i in page.get("Items", [])]
            _batch_write(client, table, stale)
            if not page.get("LastEvaluatedKey"):
                break
            arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    _mark_layout(client)
