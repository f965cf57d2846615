"""Subscribing cannot be turned on someone else: one budget per mailbox however the address is
spelled, a pending webhook subscriber's confirmation only for the address that created it, and an
answer that does the same work whatever the address's state (its timing tells nothing)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib import aws
from chalicelib.settings import get_settings
from tests.api import test_status_subscribers_api as subscribers
from tests.api.test_status_subscribers_api import FORM, confirm_path, drain, emails, stored, subscribe_json
from tests.conftest import reconfigure


@pytest.fixture
def site(client: Any, org: Any) -> dict[str, Any]:
    """The subscriber tests' page: Acme, with Checkout and Billing."""
    return subscribers.site.__wrapped__(client, org)  # type: ignore[attr-defined,no-any-return]


@pytest.fixture
def resolvable(monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib.delivery import targets

    monkeypatch.setattr(targets, "default_resolve", lambda host, port: ["93.184.216.34"])


def test_every_spelling_of_one_mailbox_spends_one_budget(client: Any, site: Any) -> None:
    spellings = ["victim+1@gmail.com", "Victim@GMAIL.com", "v.i.c.t.i.m@googlemail.com"]
    for spelling in spellings:
        assert subscribe_json(client, {"email": spelling}).status_code == 202, spelling
    refused = [subscribe_json(client, {"email": s}) for s in ("victim+2@gmail.com", "VICTIM+3@gmail.com")]
    assert [answer.status_code for answer in refused] == [429, 429]
    assert int(refused[0].headers["Retry-After"]) > 60
    drain()
    assert len(emails()) == 3  # not one more than the budget reached the mailbox
    # The subscribers keep the address as typed (lower-cased), one per spelling.
    assert sorted(s.email or "" for s in stored(site["page_id"])) == sorted(s.lower() for s in spellings)
    assert subscribe_json(client, {"email": "someone.else@gmail.com"}).status_code == 202


def test_a_refusal_reads_the_same_for_a_new_and_a_confirmed_address(client: Any, site: Any) -> None:
    reconfigure(RATE_LIMIT_STATUS_SUBSCRIBE="100")  # the caller's own budget out of the way
    subscribe_json(client, {"email": "ana@example.com"})
    drain()
    assert client.http.post(confirm_path(emails()[0]), headers=FORM, body="").status_code == 200
    for _ in range(2):
        subscribe_json(client, {"email": "ana@example.com"})
        subscribe_json(client, {"email": "new@example.com"})
    subscribe_json(client, {"email": "new@example.com"})  # both mailboxes have spent their three
    confirmed = subscribe_json(client, {"email": "ana+x@example.com"})
    fresh = subscribe_json(client, {"email": "NEW+y@example.com"})
    assert confirmed.status_code == fresh.status_code == 429
    assert json.loads(confirmed.body) == json.loads(fresh.body)
    assert confirmed.headers["Retry-After"] == fresh.headers["Retry-After"]
    assert subscribe_json(client, {"email": "other@example.com"}).status_code == 202


def test_a_webhook_subscriber_is_known_by_its_url_and_only_its_creator_confirms_it(
    client: Any, site: Any, resolvable: None
) -> None:
    body = {"email": "ops@example.com", "url": "https://hooks.example.com/status"}
    assert subscribe_json(client, body).status_code == 202
    drain()
    [first] = emails()
    assert first.destinations["ToAddresses"] == ["ops@example.com"]
    assert "https://hooks.example.com/status" in first.body

    # The takeover: the pending subscriber's URL named with another address. The answer is the
    # same, and nothing changes or goes to that address (its confirmation would show the secret).
    taken = subscribe_json(client, {**body, "email": "mallory@example.com", "component_ids": [site["billing"]]})
    assert taken.status_code == 202 and taken.body == subscribe_json(client, body).body
    drain()
    assert all(m.destinations["ToAddresses"] == ["ops@example.com"] for m in emails())
    assert len(emails()) == 2  # the creator's own resend, nothing for mallory
    [hook] = stored(site["page_id"])
    assert (hook.kind, hook.url, hook.email, hook.component_ids) == (
        "webhook",
        "https://hooks.example.com/status",
        "ops@example.com",
        [],
    )
    assert client.http.post(confirm_path(emails()[-1]), headers=FORM, body="").status_code == 200
    assert subscribe_json(client, {**body, "email": "mallory@example.com"}).status_code == 202
    drain()
    assert len(emails()) == 2 and stored(site["page_id"])[0].email == "ops@example.com"


class Calls:
    """DynamoDB and SQS requests made through the app's clients: (service, operation, table)."""

    def __init__(self) -> None:
        self.seen: Counter[tuple[str, str, str]] = Counter()

    def _before(self, params: dict[str, Any], model: Any, event_name: str = "", **_: Any) -> None:
        service = event_name.split(".")[1]
        tables = [str(params["TableName"])] if "TableName" in params else []
        tables += [str(name) for name in params.get("RequestItems") or {}]
        for item in params.get("TransactItems") or []:
            tables += [str(action["TableName"]) for action in item.values() if "TableName" in action]
        prefix = get_settings().table_prefix
        for name in tables or [""]:
            self.seen[(service, model.name, name.removeprefix(prefix))] += 1

    def clients(self) -> list[Any]:
        return [aws._dynamodb_client(), aws.client("dynamodb"), aws.client("sqs")]


@pytest.fixture
def calls(aws_env: None) -> Iterator[Calls]:
    seen = Calls()
    for client in seen.clients():
        client.meta.events.register("before-parameter-build", seen._before)
    yield seen
    for client in seen.clients():
        client.meta.events.unregister("before-parameter-build", seen._before)


def test_the_answer_does_the_same_work_whatever_the_address_state(
    client: Any, site: Any, calls: Calls, resolvable: None
) -> None:
    subscribe_json(client, {"email": "confirmed@example.com"})
    subscribe_json(client, {"email": "pending@example.com"})
    subscribe_json(client, {"email": "ops@example.com", "url": "https://hooks.example.com/s"})
    drain()
    client.http.post(confirm_path(emails()[0]), headers=FORM, body="")
    requests = {
        "new": {"email": "new@example.com"},
        "pending": {"email": "pending@example.com"},
        "confirmed": {"email": "confirmed@example.com"},
        "webhook taken": {"email": "mallory@example.com", "url": "https://hooks.example.com/s"},
    }
    work: dict[str, Counter[tuple[str, str, str]]] = {}
    for case, body in requests.items():
        calls.seen.clear()
        assert subscribe_json(client, body).status_code == 202, case
        work[case] = Counter(calls.seen)
    subscriber_calls = {key: count for key, count in work["new"].items() if key[2] == "status-subscribers"}
    assert subscriber_calls == {
        ("dynamodb", "GetItem", "status-subscribers"): 2,
        ("dynamodb", "TransactWriteItems", "status-subscribers"): 2,  # one transaction, two items
    }
    assert work["new"][("sqs", "SendMessage", "")] == 1
    assert work["new"] == work["pending"] == work["confirmed"] == work["webhook taken"], work
    drain()
    # Only the new and the pending address were sent anything.
    sent = [m.destinations["ToAddresses"][0] for m in emails()[3:]]
    assert sorted(sent) == ["new@example.com", "pending@example.com"]
