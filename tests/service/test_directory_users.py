"""Users on moto: uniqueness of email, lookups, search and updates."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.directory import users
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.store import owner_of
from tests.conftest import NOW, make_org


def _create(org, email="ann@example.com", name="Ann Lee", **extra):
    return users.create_user(organization_id=org.organization_id, name=name, email=email, now=NOW, **extra)


def test_create_user_normalizes_and_defaults(org):
    user = _create(org, email="  Ann@Example.COM ", name="  Ann   Lee ", slack_user_id="U012ABC")
    assert user.email == "ann@example.com"
    assert user.name == "Ann Lee"
    assert user.role == "responder"
    assert user.is_active is True
    assert user.slack_user_id == "U012ABC"
    assert user.created_at == NOW
    assert user.organization_id == org.organization_id
    assert users.get_user(organization_id=org.organization_id, user_id=user.user_id) == user
    assert owner_of(organization_id=org.organization_id, unique_key="user-email#ann@example.com") == user.user_id


def test_duplicate_email_is_a_conflict_case_insensitively(org):
    _create(org)
    with pytest.raises(Conflict) as raised:
        _create(org, email="ANN@example.com", name="Other Ann")
    assert raised.value.status == 409
    assert "ann@example.com" in raised.value.message
    assert raised.value.details == {"fields": [{"field": "email", "message": "already in use"}]}
    assert len(users.list_users(organization_id=org.organization_id)) == 1


def test_same_email_in_another_organization_is_fine(org):
    other = make_org("Other")
    mine = _create(org)
    theirs = _create(other)
    assert mine.user_id != theirs.user_id
    with pytest.raises(NotFound):
        users.get_user(organization_id=other.organization_id, user_id=mine.user_id)


def test_create_user_validates(org):
    cases = [
        ({"email": "not-an-email"}, "email"),
        ({"name": "   "}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"role": "superuser"}, "role"),
        ({"slack_user_id": "has space"}, "slack_user_id"),
    ]
    for extra, field in cases:
        with pytest.raises(ValidationFailed) as raised:
            _create(org, **extra)
        assert raised.value.details["fields"][0]["field"] == field
    assert users.list_users(organization_id=org.organization_id) == []


def test_get_user_not_found(org):
    for user_id in ["missing", "", "a/b", "x" * 200]:
        with pytest.raises(NotFound):
            users.get_user(organization_id=org.organization_id, user_id=user_id)


def test_find_user_by_email(org):
    user = _create(org)
    assert users.find_user_by_email(organization_id=org.organization_id, email=" ANN@example.com") == user
    assert users.find_user_by_email(organization_id=org.organization_id, email="bob@example.com") is None
    assert users.find_user_by_email(organization_id=org.organization_id, email="garbage") is None
    assert users.find_user_by_email(organization_id=make_org("Other").organization_id, email=user.email) is None


def test_list_users_newest_first_with_search_and_active_filter(org):
    ann = users.create_user(organization_id=org.organization_id, name="Ann Lee", email="ann@example.com", now=NOW)
    bob = users.create_user(
        organization_id=org.organization_id, name="Bob Stone", email="bob@corp.io", now=NOW + timedelta(minutes=1)
    )
    cyd = users.create_user(
        organization_id=org.organization_id, name="Cyd", email="cyd@example.com", now=NOW + timedelta(minutes=2)
    )
    users.update_user(organization_id=org.organization_id, user_id=cyd.user_id, now=NOW, is_active=False)
    oid = org.organization_id

    assert [u.name for u in users.list_users(organization_id=oid)] == ["Cyd", "Bob Stone", "Ann Lee"]
    assert [u.user_id for u in users.list_users(organization_id=oid, search="EXAMPLE")] == [cyd.user_id, ann.user_id]
    assert [u.user_id for u in users.list_users(organization_id=oid, search="stone")] == [bob.user_id]
    assert [u.user_id for u in users.list_users(organization_id=oid, is_active=True)] == [bob.user_id, ann.user_id]
    assert [u.user_id for u in users.list_users(organization_id=oid, is_active=False)] == [cyd.user_id]
    assert users.list_users(organization_id=oid, search="nobody") == []


def test_list_users_is_one_query(org, monkeypatch):
    _create(org)
    calls = _record_operations(monkeypatch)
    users.list_users(organization_id=org.organization_id, search="ann")
    assert calls == ["Query"]


def test_update_user_fields(org):
    user = _create(org, slack_user_id="U1")
    updated = users.update_user(
        organization_id=org.organization_id,
        user_id=user.user_id,
        now=NOW,
        name="Ann B. Lee",
        slack_user_id=None,
        role="admin",
        is_active=False,
    )
    assert (updated.name, updated.slack_user_id, updated.role, updated.is_active) == (
        "Ann B. Lee",
        None,
        "admin",
        False,
    )
    assert updated.email == user.email
    assert users.get_user(organization_id=org.organization_id, user_id=user.user_id) == updated
    renamed = users.update_user(organization_id=org.organization_id, user_id=user.user_id, now=NOW, name=None)
    assert renamed.name is None
    assert renamed.role == "admin"


def test_update_user_email_moves_the_guard(org):
    oid = org.organization_id
    ann = _create(org)
    moved = users.update_user(organization_id=oid, user_id=ann.user_id, now=NOW, email="Ann.Lee@Example.com")
    assert moved.email == "ann.lee@example.com"
    assert users.find_user_by_email(organization_id=oid, email="ann.lee@example.com") == moved
    assert users.find_user_by_email(organization_id=oid, email="ann@example.com") is None
    assert owner_of(organization_id=oid, unique_key="user-email#ann@example.com") is None
    assert owner_of(organization_id=oid, unique_key="user-email#ann.lee@example.com") == ann.user_id
    # The old address is free again.
    newcomer = _create(org, email="ann@example.com", name="New Ann")
    assert newcomer.email == "ann@example.com"


def test_update_user_email_to_a_taken_one_changes_nothing(org):
    oid = org.organization_id
    ann = _create(org)
    bob = _create(org, email="bob@example.com", name="Bob")
    with pytest.raises(Conflict):
        users.update_user(organization_id=oid, user_id=bob.user_id, now=NOW, email="ANN@example.com", name="Bobby")
    assert users.get_user(organization_id=oid, user_id=bob.user_id) == bob
    assert owner_of(organization_id=oid, unique_key="user-email#bob@example.com") == bob.user_id
    assert owner_of(organization_id=oid, unique_key="user-email#ann@example.com") == ann.user_id


def test_update_user_same_email_is_a_no_op_for_the_guard(org):
    ann = _create(org)
    same = users.update_user(organization_id=org.organization_id, user_id=ann.user_id, now=NOW, email="ANN@example.com")
    assert same.email == "ann@example.com"


def test_update_user_errors(org):
    user = _create(org)
    with pytest.raises(NotFound):
        users.update_user(organization_id=org.organization_id, user_id="missing", now=NOW, name="x")
    with pytest.raises(NotFound):
        users.update_user(organization_id=make_org("Other").organization_id, user_id=user.user_id, now=NOW, name="x")
    with pytest.raises(ValidationFailed):
        users.update_user(organization_id=org.organization_id, user_id=user.user_id, now=NOW, role="root")
    with pytest.raises(ValidationFailed):
        users.update_user(organization_id=org.organization_id, user_id=user.user_id, now=NOW, email="nope")


def test_get_users_batches(org, monkeypatch):
    a = _create(org, email="a@example.com")
    b = _create(org, email="b@example.com")
    calls = _record_operations(monkeypatch)
    found = users.get_users(organization_id=org.organization_id, user_ids=[a.user_id, b.user_id, a.user_id, "nope"])
    assert found == {a.user_id: a, b.user_id: b}
    assert calls == ["BatchGetItem"]
    assert users.get_users(organization_id=org.organization_id, user_ids=[]) == {}


def _record_operations(monkeypatch):
    """The DynamoDB operations PynamoDB sends from now on."""
    from pynamodb.connection.base import Connection

    calls: list[str] = []
    original = Connection.dispatch

    def dispatch(self, operation_name, operation_kwargs):
        calls.append(operation_name)
        return original(self, operation_name, operation_kwargs)

    monkeypatch.setattr(Connection, "dispatch", dispatch)
    return calls
