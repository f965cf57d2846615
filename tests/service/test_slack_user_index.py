"""The users' sparse slack-user-index: a Slack user id finds its Tocsin users in every
organization, and a local table kept from before the index gets it added on provisioning."""

from __future__ import annotations

from chalicelib import aws
from chalicelib.directory import users
from chalicelib.directory.tables import UserRecord
from tests.conftest import NOW, make_org


def test_a_slack_user_id_finds_its_users_in_every_organization(aws_env: None) -> None:
    acme, other = make_org("Acme"), make_org("Other")
    ana = users.create_user(
        organization_id=acme.organization_id, name="Ana", email="a@x.test", slack_user_id="U1", now=NOW
    )
    ana_too = users.create_user(
        organization_id=other.organization_id, name="Ana", email="a@x.test", slack_user_id="U1", now=NOW
    )
    users.create_user(organization_id=acme.organization_id, name="Bo", email="b@x.test", now=NOW)
    found = users.find_users_by_slack_user_id("U1")
    assert sorted(u.user_id for u in found) == sorted([ana.user_id, ana_too.user_id])
    assert users.find_users_by_slack_user_id("U2") == []
    assert users.find_users_by_slack_user_id("") == []
    users.update_user(organization_id=acme.organization_id, user_id=ana.user_id, slack_user_id=None, now=NOW)
    assert [u.organization_id for u in users.find_users_by_slack_user_id("U1")] == [other.organization_id]


def test_provisioning_adds_the_index_to_a_table_kept_from_before(fresh_aws_env: None) -> None:
    from chalicelib.local.provision import create_tables

    client = aws.client("dynamodb")
    table = UserRecord.Meta.table_name
    client.update_table(TableName=table, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "slack-user-index"}}])
    names = {i["IndexName"] for i in client.describe_table(TableName=table)["Table"].get("GlobalSecondaryIndexes", [])}
    assert names == {"email-index"}
    acme = make_org("Acme")
    ana = users.create_user(
        organization_id=acme.organization_id, name="Ana", email="a@x.test", slack_user_id="U1", now=NOW
    )
    create_tables()
    names = {i["IndexName"] for i in client.describe_table(TableName=table)["Table"]["GlobalSecondaryIndexes"]}
    assert names == {"email-index", "slack-user-index"}
    assert [u.user_id for u in users.find_users_by_slack_user_id("U1")] == [ana.user_id]
    create_tables()  # again: nothing to add
