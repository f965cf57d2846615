"""The local emulator's snapshot and journal (chalicelib/local/persistence.py), on in-process moto."""

from __future__ import annotations

import json
import pickle
import threading
from pathlib import Path

import pytest

from chalicelib import aws
from chalicelib.local.persistence import SNAPSHOT_NAME, SnapshotUnreadable, StateStore
from chalicelib.settings import get_settings
from chalicelib.store.counters import CounterRecord, next_value


def _store(directory: Path) -> StateStore:
    return StateStore(directory, (threading.Lock(), threading.Lock()))


def _no_replay(headers: dict[str, str], body: bytes) -> None:
    raise AssertionError("nothing to replay")


def test_a_snapshot_brings_back_items_indexes_ttl_and_delayed_messages(fresh_aws_env: None, tmp_path: Path) -> None:
    aws.bind_tables()
    assert next_value(organization_id="org", counter_name="incident#2026") == 1
    sqs = aws.client("sqs")
    queue_url = sqs.create_queue(QueueName="persisted")["QueueUrl"]
    sqs.send_message(QueueUrl=queue_url, MessageBody="timer", DelaySeconds=900)
    store = _store(tmp_path)
    store.restore(_no_replay)
    store.changes += 1
    assert store.snapshot(in_background=False)

    # Changed after the snapshot, then the snapshot is restored: back to what it held.
    assert next_value(organization_id="org", counter_name="incident#2026") == 2
    sqs.purge_queue(QueueUrl=queue_url)
    restored = _store(tmp_path).restore(_no_replay)

    assert restored.snapshot
    assert CounterRecord.get("org", "incident#2026").current_value == 1
    assert next_value(organization_id="org", counter_name="incident#2026") == 2  # the counter works on
    attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessagesDelayed"] == "1"
    dynamodb = aws.client("dynamodb")
    incidents = dynamodb.describe_table(TableName=get_settings().table_name("incidents"))["Table"]
    indexes = sorted(index["IndexName"] for index in incidents.get("GlobalSecondaryIndexes", []))
    assert indexes == ["list-index", "organization-time-index"]
    ttl = dynamodb.describe_time_to_live(TableName=get_settings().table_name("idempotency"))
    assert ttl["TimeToLiveDescription"]["TimeToLiveStatus"] == "ENABLED"


def test_the_journal_is_replayed_in_order_up_to_a_torn_last_line(tmp_path: Path) -> None:
    journal = tmp_path / "journal-00000000.jsonl"
    targets = [f"DynamoDB_20120810.PutItem{n}" for n in range(3)]
    lines = [json.dumps({"headers": {"X-Amz-Target": target}, "body": "{}"}) + "\n" for target in targets]
    journal.write_text("".join(lines) + '{"headers": {"X-Amz')
    replayed: list[str] = []

    restored = _store(tmp_path).restore(lambda headers, body: replayed.append(headers["X-Amz-Target"]))

    assert restored.replayed_writes == 3
    assert replayed == targets


def test_a_snapshot_of_another_moto_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / SNAPSHOT_NAME).write_bytes(pickle.dumps({"format": 1, "moto": "0.0.1", "journal": 0, "state": {}}))
    with pytest.raises(SnapshotUnreadable, match=r"moto 0\.0\.1"):
        _store(tmp_path).restore(_no_replay)
