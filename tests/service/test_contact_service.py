"""Contact methods and notification rules on moto: lazy defaults, one Query per profile, the
limits, address changes, rules naming foreign or deleted methods, stale versions."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest
from pynamodb.connection.base import Connection

from chalicelib.contact import rules, service
from chalicelib.contact.rules import Step
from chalicelib.contact.tables import ContactRecord, user_key
from chalicelib.directory import users
from chalicelib.directory.users import User
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, make_org


def _user(org: Org, email: str = "ann@example.com", slack: str | None = "U1") -> User:
    return users.create_user(organization_id=org.organization_id, name="Ann", email=email, slack_user_id=slack, now=NOW)


def _add(org: Org, user: User, method_type: str = "sms", address: str = "+15551234567", label: str | None = None):
    return service.create_method(
        organization_id=org.organization_id,
        user_id=user.user_id,
        method_type=method_type,
        address=address,
        label=label,
        now=NOW,
        settings=get_settings(),
    )


@pytest.fixture
def dynamodb_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The DynamoDB operations PynamoDB sends, in order."""
    calls: list[str] = []
    original = Connection._make_api_call

    def record(self: Connection, operation_name: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(operation_name)
        return original(self, operation_name, *args, **kwargs)

    monkeypatch.setattr(Connection, "_make_api_call", record)
    yield calls


def _race(count: int, work: Callable[[int], Any]) -> tuple[list[Any], list[BaseException]]:
    barrier = threading.Barrier(count)

    def run(index: int) -> Any:
        barrier.wait()
        return work(index)

    results, errors = [], []
    with ThreadPoolExecutor(max_workers=count) as pool:
        for future in [pool.submit(run, i) for i in range(count)]:
            try:
                results.append(future.result())
            except Exception as error:
                errors.append(error)
    return results, errors


def test_first_read_writes_the_defaults_then_reads_are_one_query(org: Org, dynamodb_calls: list[str]) -> None:
    ann = _user(org)
    dynamodb_calls.clear()
    first = service.profile(org.organization_id, ann, now=NOW)
    assert dynamodb_calls == ["Query", "TransactWriteItems", "Query"]
    assert [(m.contact_method_id, m.type, m.address, m.verified) for m in first.methods] == [
        ("default-email", "email", "ann@example.com", True),
        ("default-slack", "slack", "U1", True),
    ]
    for urgency in ("high", "low"):
        assert [(s.contact_method.contact_method_id, s.delay_minutes) for s in first.steps(urgency)] == [
            ("default-email", 0),
            ("default-slack", 0),
        ]
    assert first.version == 1
    assert first.method("default-slack") == first.methods[1]
    assert first.method("nope") is None
    dynamodb_calls.clear()
    assert service.profile(org.organization_id, ann, now=NOW + timedelta(hours=1)) == first
    assert dynamodb_calls == ["Query"]


def test_a_user_without_slack_gets_email_only(org: Org) -> None:
    bob = _user(org, "bob@example.com", slack=None)
    found = service.profile(org.organization_id, bob, now=NOW)
    assert [m.type for m in found.methods] == ["email"]
    assert [s.contact_method.type for s in found.steps("low")] == ["email"]
    with pytest.raises(ValueError):
        found.steps("medium")


def test_racing_first_reads_write_the_defaults_once(org: Org) -> None:
    ann = _user(org)
    results, errors = _race(6, lambda _: service.profile(org.organization_id, ann, now=NOW))
    assert errors == []
    assert all(result == results[0] for result in results)
    items = list(ContactRecord.query(user_key(org.organization_id, ann.user_id)))
    assert sorted(item.item_key for item in items) == ["method#default-email", "method#default-slack", "rules"]


def test_the_default_email_follows_the_account_email(org: Org) -> None:
    ann = _user(org)
    service.profile(org.organization_id, ann, now=NOW)
    moved = users.update_user(organization_id=org.organization_id, user_id=ann.user_id, email="ann@new.io", now=NOW)
    assert service.profile(org.organization_id, moved, now=NOW).method("default-email").address == "ann@new.io"  # type: ignore[union-attr]
    with pytest.raises(ValidationFailed):
        service.update_method(
            organization_id=org.organization_id,
            user_id=ann.user_id,
            contact_method_id="default-email",
            address="other@example.com",
            now=NOW,
            settings=get_settings(),
        )
    relabelled = service.update_method(
        organization_id=org.organization_id,
        user_id=ann.user_id,
        contact_method_id="default-email",
        label="Work",
        now=NOW,
        settings=get_settings(),
    )
    assert (relabelled.label, relabelled.address) == ("Work", "ann@new.io")
    # The account email is taken: adding it again is a duplicate.
    with pytest.raises(Conflict):
        _add(org, moved, "email", "ANN@new.io")


def test_phone_methods_start_unverified_and_duplicates_conflict(org: Org) -> None:
    ann = _user(org)
    sms = _add(org, ann, label="  Mobile ")
    assert (sms.type, sms.address, sms.label, sms.verified) == ("sms", "+15551234567", "Mobile", False)
    voice = _add(org, ann, "voice")
    assert (voice.label, voice.verified) == ("Voice call", False)
    with pytest.raises(Conflict):
        _add(org, ann)
    work = _add(org, ann, "email", "Work@Example.com")
    assert (work.address, work.verified) == ("work@example.com", True)
    # Not in the address index until verified.
    assert service.owners_of_phone(method_type="sms", address="+15551234567") == []
    # Added methods are not in the rules: the defaults stay.
    found = service.profile(org.organization_id, ann, now=NOW)
    assert [s.contact_method.contact_method_id for s in found.steps("high")] == ["default-email", "default-slack"]


def test_at_most_twenty_methods_even_when_racing(org: Org) -> None:
    ann = _user(org)  # 2 defaults
    for n in range(rules.MAX_METHODS - 4):
        _add(org, ann, "sms", f"+1555000{n:04d}")
    results, errors = _race(5, lambda n: _add(org, ann, "voice", f"+1666000{n:04d}"))
    assert len(results) == 2
    assert len(errors) == 3 and all(isinstance(e, Conflict) for e in errors)
    assert len(service.profile(org.organization_id, ann, now=NOW).methods) == rules.MAX_METHODS


def test_unknown_users_and_methods_are_404(org: Org) -> None:
    ann = _user(org)
    other = make_org("Other")
    for user_id in ("no-such-user", "bad id!"):
        with pytest.raises(NotFound):
            service.list_methods(organization_id=org.organization_id, user_id=user_id, now=NOW)
    with pytest.raises(NotFound):
        service.list_methods(organization_id=other.organization_id, user_id=ann.user_id, now=NOW)
    with pytest.raises(NotFound):
        service.get_method(organization_id=org.organization_id, user_id=ann.user_id, contact_method_id="x", now=NOW)
    with pytest.raises(NotFound):
        service.delete_method(organization_id=org.organization_id, user_id=ann.user_id, contact_method_id="x", now=NOW)


def test_rules_are_sorted_validated_and_versioned(org: Org) -> None:
    ann = _user(org)
    sms = _add(org, ann)
    voice = _add(org, ann, "voice")
    updated = service.put_rules(
        organization_id=org.organization_id,
        user_id=ann.user_id,
        high=[Step(voice.contact_method_id, 5), Step(sms.contact_method_id, 0)],
        low=[Step("default-email", 0)],
        now=NOW,
        expected_version=1,
    )
    assert [(s.contact_method.type, s.delay_minutes, s.contact_method.verified) for s in updated.steps("high")] == [
        ("sms", 0, False),
        ("voice", 5, False),
    ]
    assert updated.version == 2
    assert service.profile(org.organization_id, ann, now=NOW) == updated
    with pytest.raises(Conflict) as stale:
        service.put_rules(
            organization_id=org.organization_id, user_id=ann.user_id, high=[], low=[], now=NOW, expected_version=1
        )
    assert stale.value.details == {"expected_version": 1, "current_version": 2}
    # Without a version, the latest is replaced.
    cleared = service.put_rules(organization_id=org.organization_id, user_id=ann.user_id, high=[], low=[], now=NOW)
    assert (cleared.steps("high"), cleared.version) == ([], 3)


def test_rules_refuse_foreign_and_deleted_methods(org: Org) -> None:
    ann, bob = _user(org), _user(org, "bob@example.com")
    bobs = _add(org, bob)
    with pytest.raises(ValidationFailed) as raised:
        service.put_rules(
            organization_id=org.organization_id,
            user_id=ann.user_id,
            high=[Step(bobs.contact_method_id, 0)],
            low=[],
            now=NOW,
        )
    assert raised.value.details == {
        "fields": [{"field": "high.0.contact_method_id", "message": "not a contact method of this user"}]
    }
    mine = _add(org, ann)
    service.delete_method(
        organization_id=org.organization_id, user_id=ann.user_id, contact_method_id=mine.contact_method_id, now=NOW
    )
    with pytest.raises(ValidationFailed):
        service.put_rules(
            organization_id=org.organization_id,
            user_id=ann.user_id,
            high=[],
            low=[Step(mine.contact_method_id, 3)],
            now=NOW,
        )


def test_deleting_a_method_removes_its_steps_in_the_same_write(org: Org) -> None:
    ann = _user(org)
    sms = _add(org, ann)
    service.put_rules(
        organization_id=org.organization_id,
        user_id=ann.user_id,
        high=[Step(sms.contact_method_id, 0), Step("default-email", 2), Step(sms.contact_method_id, 10)],
        low=[Step("default-email", 0)],
        now=NOW,
    )
    service.delete_method(
        organization_id=org.organization_id, user_id=ann.user_id, contact_method_id=sms.contact_method_id, now=NOW
    )
    after = service.profile(org.organization_id, ann, now=NOW)
    assert [(s.contact_method.contact_method_id, s.delay_minutes) for s in after.steps("high")] == [
        ("default-email", 2)
    ]
    assert after.version == 3  # the delete changed the rules, so their version moved
    assert after.method(sms.contact_method_id) is None
    # Deleting a method no rule names leaves the version alone.
    spare = _add(org, ann, "voice")
    service.delete_method(
        organization_id=org.organization_id, user_id=ann.user_id, contact_method_id=spare.contact_method_id, now=NOW
    )
    assert service.profile(org.organization_id, ann, now=NOW).version == 3
    # The defaults never come back once the user has rules.
    service.delete_method(
        organization_id=org.organization_id, user_id=ann.user_id, contact_method_id="default-email", now=NOW
    )
    assert service.profile(org.organization_id, ann, now=NOW).method("default-email") is None


def test_a_new_phone_number_is_unverified_again(org: Org) -> None:
    ann = _user(org)
    sms = _add(org, ann)
    record = ContactRecord.get(user_key(org.organization_id, ann.user_id), f"method#{sms.contact_method_id}")
    record.update(actions=[ContactRecord.verified.set(True), ContactRecord.address_key.set("sms#+15551234567")])
    assert service.owners_of_phone(method_type="sms", address="+15551234567") == [
        (org.organization_id, ann.user_id, sms.contact_method_id)
    ]
    moved = service.update_method(
        organization_id=org.organization_id,
        user_id=ann.user_id,
        contact_method_id=sms.contact_method_id,
        address="+15557654321",
        now=NOW,
        settings=get_settings(),
    )
    assert (moved.address, moved.verified) == ("+15557654321", False)
    assert service.owners_of_phone(method_type="sms", address="+15551234567") == []
    # A label change alone keeps the address and its state; the same address is no change.
    same = service.update_method(
        organization_id=org.organization_id,
        user_id=ann.user_id,
        contact_method_id=sms.contact_method_id,
        address="+15557654321",
        label=None,
        now=NOW,
        settings=get_settings(),
    )
    assert (same.address, same.label) == ("+15557654321", "SMS")
    second = _add(org, ann, "sms", "+15550000000")
    for address, error in (("+15557654321", Conflict), ("not a number", ValidationFailed)):
        with pytest.raises(error):
            service.update_method(
                organization_id=org.organization_id,
                user_id=ann.user_id,
                contact_method_id=second.contact_method_id,
                address=address,
                now=NOW,
                settings=get_settings(),
            )
