"""The storage kernel on moto: every kind of refused write is told apart from success and from
other errors, and a labelled transaction names the items whose condition failed."""

from __future__ import annotations

import uuid

import pytest
from pynamodb.exceptions import DeleteError, PutError, TransactWriteError, UpdateError
from pynamodb.transactions import TransactWrite

from chalicelib import aws, store
from chalicelib.directory.tables import TeamRecord
from chalicelib.store.counters import CounterRecord
from tests.conftest import NOW


def _organization() -> str:
    return f"org-{uuid.uuid4().hex[:12]}"


def _counter(organization_id: str, value: int = 0) -> CounterRecord:
    aws.bind_tables()
    record = CounterRecord(organization_id, "probe", current_value=value)
    record.save()
    return record


def test_condition_failed_recognises_each_refused_write(aws_env: None) -> None:
    record = _counter(_organization(), 1)
    refused = CounterRecord.current_value == 2
    attempts = [
        (PutError, lambda: record.save(condition=refused)),
        (UpdateError, lambda: record.update(actions=[CounterRecord.current_value.set(3)], condition=refused)),
        (DeleteError, lambda: record.delete(condition=refused)),
    ]
    for error_class, write in attempts:
        with pytest.raises(error_class) as caught:
            write()
        assert store.condition_failed(caught.value), error_class
    with pytest.raises(TransactWriteError) as caught, TransactWrite(connection=aws.transaction_connection()) as tx:
        tx.update(record, actions=[CounterRecord.current_value.set(3)], condition=refused)
    assert store.condition_failed(caught.value)
    assert CounterRecord.get(record.organization_id, "probe").current_value == 1


def test_a_write_refused_for_another_reason_is_not_a_failed_condition(aws_env: None) -> None:
    aws.bind_tables()
    invalid = CounterRecord(_organization(), "")  # an empty key string: a ValidationException
    with pytest.raises(PutError) as caught:
        invalid.save()
    assert not store.condition_failed(caught.value)
    with pytest.raises(PutError):
        store.save_if(invalid)


def test_put_if_absent_has_one_winner(aws_env: None) -> None:
    organization_id = _organization()
    aws.bind_tables()
    assert store.put_if_absent(CounterRecord(organization_id, "probe", current_value=1))
    assert not store.put_if_absent(CounterRecord(organization_id, "probe", current_value=2))
    assert CounterRecord.get(organization_id, "probe").current_value == 1


def test_save_update_delete_if_answer_false_on_a_false_condition(aws_env: None) -> None:
    record = _counter(_organization(), 1)
    assert not store.save_if(record, CounterRecord.current_value == 5)
    assert store.save_if(record, CounterRecord.current_value == 1)
    assert not store.update_if(record, [CounterRecord.current_value.set(7)], CounterRecord.current_value == 5)
    assert store.update_if(record, [CounterRecord.current_value.set(7)], CounterRecord.current_value == 1)
    assert record.current_value == 7
    assert not store.delete_if(record, CounterRecord.current_value == 1)
    assert store.delete_if(record, CounterRecord.current_value == 7)
    assert CounterRecord.count(record.organization_id) == 0


def test_the_version_condition_counts_as_a_failed_condition(aws_env: None) -> None:
    aws.bind_tables()
    team = TeamRecord(_organization(), "team-1", name="Core", created_at=NOW)
    team.save()
    stale = TeamRecord.get(team.organization_id, "team-1", consistent_read=True)
    team.name = "Platform"
    assert store.save_if(team)
    stale.name = "Stale"
    assert not store.save_if(stale)
    assert not store.update_if(stale, [TeamRecord.name.set("Stale")])
    assert not store.delete_if(stale)
    assert store.delete_if(stale, add_version_condition=False)


def test_an_unversioned_update_leaves_the_version_to_the_editors(aws_env: None) -> None:
    aws.bind_tables()
    team = TeamRecord(_organization(), "team-1", name="Core", created_at=NOW)
    team.save()
    editor = TeamRecord.get(team.organization_id, "team-1", consistent_read=True)
    assert store.update_unversioned_if(team, [TeamRecord.description.set("bookkeeping")], TeamRecord.name == "Core")
    assert (team.description, team.version) == ("bookkeeping", 1)  # the record took the stored result
    assert not store.update_unversioned_if(team, [TeamRecord.description.set("no")], TeamRecord.name == "Other")
    editor.name = "Platform"
    assert store.save_if(editor)  # the editor's version still holds
    assert TeamRecord.get(team.organization_id, "team-1", consistent_read=True).version == 2


def test_a_transaction_names_the_items_that_failed(aws_env: None) -> None:
    organization_id = _organization()
    existing = _counter(organization_id, 5)
    CounterRecord(organization_id, "other", current_value=1).save()
    tx = store.Transaction()
    tx.put("new", CounterRecord(organization_id, "new", current_value=1), store.absent(CounterRecord))
    tx.update("existing", existing, [CounterRecord.current_value.set(6)], CounterRecord.current_value == 99)
    tx.check("present", CounterRecord, organization_id, "other", CounterRecord.current_value.exists())
    with pytest.raises(store.TransactionCancelled) as caught:
        tx.commit()
    assert caught.value.failed == frozenset({"existing"})
    assert not caught.value.contention
    assert store.condition_failed(caught.value)
    assert CounterRecord.count(organization_id) == 2  # all or nothing: "new" was not written


def test_unique_claims_have_one_owner(aws_env: None) -> None:
    organization_id = _organization()
    first = store.Transaction()
    store.claim_unique(first, "name", organization_id, "team-name#core", "team-1")
    first.commit()
    second = store.Transaction()
    store.claim_unique(second, "name", organization_id, "team-name#core", "team-2")
    with pytest.raises(store.TransactionCancelled) as caught:
        second.commit()
    assert caught.value.failed == frozenset({"name"})
    assert store.owner_of(organization_id=organization_id, unique_key="team-name#core") == "team-1"
    wrong_owner = store.Transaction()
    store.release_unique(wrong_owner, "name", organization_id, "team-name#core", "team-2")
    with pytest.raises(store.TransactionCancelled):
        wrong_owner.commit()
    release = store.Transaction()
    store.release_unique(release, "name", organization_id, "team-name#core", "team-1")
    release.commit()
    assert store.owner_of(organization_id=organization_id, unique_key="team-name#core") is None
