"""The test emulator's reset between tests (tests/emulator.py): empty, but still provisioned."""

from __future__ import annotations

from chalicelib import aws
from chalicelib.queue.messages import EVENTS_QUEUE
from chalicelib.settings import get_settings
from tests.conftest import make_org
from tests.emulator import Emulator, moto_version_problem


def test_the_installed_moto_is_the_one_the_reset_was_written_for(aws_env: None) -> None:
    """The one test that fails when moto changes under the reset (it names what to check)."""
    from moto.dynamodb.models import dynamodb_backends
    from moto.sqs.models import sqs_backends

    assert moto_version_problem() is None, moto_version_problem()
    tables = [t for b in dynamodb_backends["123456789012"].values() for t in b.tables.values()]
    queues = [q for b in sqs_backends["123456789012"].values() for q in b.queues.values()]
    assert tables and all(isinstance(table.items, dict) for table in tables)
    assert queues and all(hasattr(queue, "_messages_lock") and isinstance(queue._messages, list) for queue in queues)
    assert all(isinstance(q._pending_messages, set) and isinstance(q.deleted_messages, set) for q in queues)


def _queued_messages() -> int:
    attributes = aws.client("sqs").get_queue_attributes(
        QueueUrl=aws.queue_url(EVENTS_QUEUE),
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesDelayed"],
    )["Attributes"]
    return sum(int(value) for value in attributes.values())


def _sent_mail() -> int:
    from moto.ses.models import ses_backends

    return len(ses_backends["123456789012"]["us-east-1"].sent_messages)


def test_restore_empties_tables_queues_and_mail_and_keeps_what_provisioning_made(
    aws_env: None, emulator: Emulator
) -> None:
    from chalicelib.organization.tables import OrganizationRecord

    tables = set(aws.client("dynamodb").list_tables()["TableNames"])
    make_org("Before the reset")
    aws.client("sqs").send_message(QueueUrl=aws.queue_url(EVENTS_QUEUE), MessageBody="{}", DelaySeconds=60)
    sender = get_settings().ses_sender
    aws.client("ses").send_email(
        Source=sender,
        Destination={"ToAddresses": ["someone@example.com"]},
        Message={"Subject": {"Data": "s"}, "Body": {"Text": {"Data": "b"}}},
    )
    assert OrganizationRecord.count() == 1 and _queued_messages() == 1 and _sent_mail() == 1

    full_provisions = emulator.full_provisions
    emulator.restore()

    assert emulator.full_provisions == full_provisions  # emptied in place, nothing re-created
    assert set(aws.client("dynamodb").list_tables()["TableNames"]) == tables
    assert OrganizationRecord.count() == 0
    assert _queued_messages() == 0 and _sent_mail() == 0
    assert sender in aws.client("ses").list_verified_email_addresses()["VerifiedEmailAddresses"]


def test_a_new_table_brings_a_full_provision(aws_env: None, emulator: Emulator) -> None:
    aws.client("dynamodb").create_table(
        TableName="made-by-a-test",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    full_provisions = emulator.full_provisions
    emulator.restore()
    assert emulator.full_provisions == full_provisions + 1
    assert "made-by-a-test" not in aws.client("dynamodb").list_tables()["TableNames"]
    make_org()  # provisioned again: every table is there


def test_fresh_aws_env_starts_from_a_new_account(fresh_aws_env: None, emulator: Emulator) -> None:
    assert emulator.baseline is not None
    assert make_org().organization_id
