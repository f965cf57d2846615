"""The emulator's item-level transaction backups keep TransactWriteItems all-or-nothing."""

from __future__ import annotations

import pytest
from pynamodb.exceptions import TransactWriteError
from pynamodb.transactions import TransactWrite

from chalicelib import aws
from chalicelib.store.counters import CounterRecord


def test_a_failed_transaction_changes_nothing(aws_env: None) -> None:
    aws.bind_tables()
    CounterRecord("org", "existing", current_value=5).save()
    with pytest.raises(TransactWriteError), TransactWrite(connection=aws.transaction_connection()) as transaction:
        transaction.save(CounterRecord("org", "new", current_value=1))
        transaction.update(
            CounterRecord("org", "existing"),
            actions=[CounterRecord.current_value.set(99)],
            condition=CounterRecord.current_value == 6,  # false: the whole transaction is cancelled
        )
    assert CounterRecord.get("org", "existing").current_value == 5
    assert CounterRecord.count("org", CounterRecord.counter_name == "new") == 0


def test_a_successful_transaction_writes_every_item(aws_env: None) -> None:
    aws.bind_tables()
    CounterRecord("org", "existing", current_value=5).save()
    with TransactWrite(connection=aws.transaction_connection()) as transaction:
        transaction.save(CounterRecord("org", "new", current_value=1))
        transaction.update(
            CounterRecord("org", "existing"),
            actions=[CounterRecord.current_value.set(6)],
            condition=CounterRecord.current_value == 5,
        )
    assert CounterRecord.get("org", "existing").current_value == 6
    assert CounterRecord.get("org", "new").current_value == 1
