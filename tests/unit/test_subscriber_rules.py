"""The subscriber rules (pure): what a subscribe request does to the address's subscriber, who
follows an event, guard keys; and the subscribe form's view of a page's components."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.statuspage.subscribe_form import subscribe_form
from chalicelib.subscriber import rules
from chalicelib.subscriber.tables import SubscriberItem

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def item(status: str, expires_at: datetime | None = None, email: str = "ana@example.com") -> SubscriberItem:
    return SubscriberItem("pg_1", "SUB#sub_1", status=status, expires_at=expires_at, email=email)


@pytest.mark.parametrize(
    ("current", "create", "refresh"),
    [
        (None, True, False),
        (item("pending", NOW + timedelta(hours=1)), False, True),
        (item("pending", NOW), True, False),  # expired at this very moment: as if absent
        (item("pending", NOW - timedelta(days=3)), True, False),
        (item("confirmed"), False, False),  # nothing sent, nothing changed
        # A webhook URL named again with another address: its confirmation stays with its creator.
        (item("pending", NOW + timedelta(hours=1), email="mallory@example.com"), False, False),
        (item("pending", NOW - timedelta(hours=1), email="mallory@example.com"), True, False),  # expired
        (item("confirmed", email="mallory@example.com"), False, False),
    ],
)
def test_what_a_subscribe_does(current: SubscriberItem | None, create: bool, refresh: bool) -> None:
    decided = rules.decide(current, "ana@example.com", NOW)
    assert decided == rules.SubscribeDecision(create=create, refresh=refresh)


@pytest.mark.parametrize(
    ("followed", "touched", "told"),
    [
        ([], ["cmp_a"], True),
        (None, ["cmp_a"], True),
        (["cmp_a"], ["cmp_a", "cmp_b"], True),
        (["cmp_c"], ["cmp_a", "cmp_b"], False),
        (["cmp_c"], [], True),  # an event naming no component concerns the whole page
    ],
)
def test_who_follows_an_event(followed: list[str] | None, touched: list[str], told: bool) -> None:
    assert rules.wanted(followed, touched) is told


def test_guard_keys_and_ids() -> None:
    assert rules.guard_key(email="ana@example.com", url=None) == "ADDR#ana@example.com"
    hook = rules.guard_key(email="ana@example.com", url="https://hooks.example.com/x")
    assert hook.startswith("URL#") and len(hook) == 4 + 64 and "hooks" not in hook
    first, second = rules.new_subscriber_id(NOW), rules.new_subscriber_id(NOW)
    assert rules.is_subscriber_id(first) and first < second
    assert not rules.is_subscriber_id("sub_xyz") and not rules.is_subscriber_id("cmp_" + "0" * 24)
    assert rules.email_bucket_identity("ana@example.com") != "ana@example.com"


@pytest.mark.parametrize(
    ("spelling", "same_budget"),
    [
        ("ana@example.com", True),
        ("ANA@Example.com", True),
        ("ana+1@example.com", True),
        ("ana+news@EXAMPLE.COM", True),
        ("a.na@example.com", False),  # dots count outside Gmail
        ("bo@example.com", False),
    ],
)
def test_one_budget_per_mailbox(spelling: str, same_budget: bool) -> None:
    same = rules.email_bucket_identity(spelling) == rules.email_bucket_identity("ana@example.com")
    assert same is same_budget


def test_one_budget_per_gmail_mailbox_however_spelled() -> None:
    spellings = ["v.ictim@gmail.com", "victim+2@googlemail.com", "VICTIM@gmail.com", "vic.tim+x@gmail.com"]
    assert {rules.email_bucket_identity(s) for s in spellings} == {rules.email_bucket_identity("victim@gmail.com")}
    assert rules.requester_digest("ana@example.com") != rules.requester_digest("ana+1@example.com")


COMPONENTS = {
    "sections": [
        {
            "name": "Core",
            "components": [{"component_id": "cmp_b", "name": "Billing"}],
            "groups": [
                {"name": "APIs", "components": [{"component_id": "cmp_c", "name": "Checkout"}]},
                {"name": "Empty", "components": []},
            ],
        },
        {"name": "Nothing here", "components": [], "groups": []},
    ]
}


def test_the_form_groups_components_as_the_page_does() -> None:
    form = subscribe_form(COMPONENTS, action="acme/subscribe", email="ana@example.com", chosen=["cmp_c"])
    [core] = form.sections  # a section with no component offers no choice
    assert [(c.name, c.checked) for c in core.choices] == [("Billing", False)]
    [apis] = core.groups
    assert (apis.name, [(c.component_id, c.checked) for c in apis.choices]) == ("APIs", [("cmp_c", True)])
    assert form.open_choices and form.email == "ana@example.com" and form.problems == {}
    closed = subscribe_form(COMPONENTS, action="acme/subscribe")
    assert not closed.open_choices
    assert subscribe_form(COMPONENTS, action="x", problems={"component_ids": "no"}).open_choices
