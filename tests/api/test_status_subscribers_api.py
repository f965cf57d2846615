"""Status page subscribers through chalice.test.Client: subscribe (JSON and the page's form),
the confirmation email, the one-button confirm and unsubscribe pages (RFC 8058 one-click), rate
limits, and the managers' list, count and remove."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest

from chalicelib import aws, clock
from chalicelib.settings import get_settings
from chalicelib.statuspage import pages, structure
from chalicelib.statuspage.repository import item_id
from chalicelib.subscriber import links, notice_webhooks, repository
from chalicelib.subscriber.links import SubscriberLink, sign
from chalicelib.subscriber.tables import SubscriberItem
from tests.conftest import NOW, make_org, reconfigure
from tests.kit.api import call

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
JSON = {"Content-Type": "application/json"}
CONFIRM_LINK = re.compile(r'href="(http[^"]*/status/acme/confirm\?token=[^"]+)"')


@pytest.fixture
def site(client: Any, org: Any) -> dict[str, Any]:
    clock.freeze(NOW)
    page = pages.create_page(organization_id=org.organization_id, name="Acme", slug="acme", now=NOW)
    section = structure.create_section(page_id=page.page_id, name="Core", now=NOW)
    group = structure.create_group(page_id=page.page_id, section_id=item_id(section), name="APIs", now=NOW)
    checkout = structure.create_component(
        page_id=page.page_id,
        section_id=item_id(section),
        group_id=item_id(group),
        name="Checkout",
        status="operational",
        now=NOW,
    )
    billing = structure.create_component(
        page_id=page.page_id, section_id=item_id(section), group_id=None, name="Billing", status="operational", now=NOW
    )
    return {"page_id": page.page_id, "checkout": item_id(checkout), "billing": item_id(billing), "org": org}


def subscribe_json(client: Any, body: dict[str, Any], slug: str = "acme") -> Any:
    return client.http.post(f"/status/{slug}/subscribe", headers=JSON, body=json.dumps(body))


def subscribe_form(client: Any, fields: list[tuple[str, str]], slug: str = "acme") -> Any:
    return client.http.post(f"/status/{slug}/subscribe", headers=FORM, body=urlencode(fields))


def drain() -> list[str]:
    """Run the events worker over the events queue, as Lambda would."""
    from chalicelib.queue.messages import EVENTS_QUEUE
    from chalicelib.workers import dispatch

    sqs, url = aws.client("sqs"), aws.queue_url(EVENTS_QUEUE)
    handled: list[str] = []
    for _ in range(20):
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0).get("Messages", [])
        if not messages:
            break
        assert dispatch.handle_records([{"messageId": m["MessageId"], "body": m["Body"]} for m in messages]) == {
            "batchItemFailures": []
        }
        for message in messages:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            handled.append(json.loads(message["Body"])["message_type"])
    return handled


def emails() -> list[Any]:
    from moto.ses.models import ses_backends

    return list(ses_backends["123456789012"]["us-east-1"].sent_messages)


def confirm_path(message: Any) -> str:
    found = CONFIRM_LINK.search(message.body)
    assert found, message.body
    parts = urlsplit(found.group(1).replace("&amp;", "&"))
    return f"{parts.path}?{parts.query}"


def stored(page_id: str) -> list[SubscriberItem]:
    return repository.all_subscribers(page_id, clock.now())


def html(response: Any) -> str:
    assert response.headers["Content-Type"].startswith("text/html")
    assert "form-action 'self'" in response.headers["Content-Security-Policy"]
    assert response.headers["Cache-Control"] == "no-store"
    return str(response.body.decode() if isinstance(response.body, bytes) else response.body)


def test_json_subscribe_sends_one_confirmation_and_the_link_confirms_on_post_only(client: Any, site: Any) -> None:
    answer = subscribe_json(client, {"email": " Ana@Example.com ", "component_ids": [site["checkout"]]})
    assert answer.status_code == 202
    assert json.loads(answer.body) == {
        "accepted": True,
        "message": "If the address can be subscribed, a confirmation email is on its way; nothing else is sent "
        "until it is confirmed.",
    }
    assert "X-RateLimit-Remaining" in answer.headers
    [pending] = stored(site["page_id"])
    assert (pending.email, pending.status, pending.kind, pending.component_ids) == (
        "ana@example.com",
        "pending",
        "email",
        [site["checkout"]],
    )
    assert pending.expires_at == NOW + timedelta(hours=48)
    assert drain() == ["status_subscriber.confirmation_requested"]
    [message] = emails()
    assert message.destinations["ToAddresses"] == ["ana@example.com"]
    assert message.subject == "Confirm your subscription to Acme status"
    link = confirm_path(message)

    shown = client.http.get(link)  # what a mail scanner does: nothing changes
    assert shown.status_code == 200
    page = html(shown)
    assert page.count("<button") == 1 and "Confirm subscription" in page
    assert shown.headers["Referrer-Policy"] == "no-referrer"
    assert stored(site["page_id"])[0].status == "pending"

    done = client.http.post(link, headers=FORM, body="")
    assert done.status_code == 200 and "You are subscribed" in html(done)
    [confirmed] = stored(site["page_id"])
    assert (confirmed.status, confirmed.confirmed_at, confirmed.expires_at) == ("confirmed", NOW, None)
    guard = repository.get_item(site["page_id"], "ADDR#ana@example.com")
    assert guard is not None and guard.subscriber_id == confirmed.subscriber_id and guard.expires_at is None

    again = client.http.post(link, headers=FORM, body="")
    assert again.status_code == 200 and "Already confirmed" in html(again)
    assert "Already confirmed" in html(client.http.get(link))


def test_subscribing_again_resends_while_pending_and_sends_nothing_once_confirmed(client: Any, site: Any) -> None:
    first = subscribe_json(client, {"email": "ana@example.com"})
    second = subscribe_json(client, {"email": "ana@example.com", "component_ids": [site["billing"]]})
    assert first.body == second.body and first.status_code == second.status_code == 202
    drain()
    assert len(emails()) == 2
    [pending] = stored(site["page_id"])  # one subscriber, with the latest choice
    assert pending.component_ids == [site["billing"]]
    client.http.post(confirm_path(emails()[-1]), headers=FORM, body="")

    third = subscribe_json(client, {"email": "ana@example.com"})
    assert third.status_code == 202 and third.body == first.body
    # The request queued the same work as one that sends (its timing tells nothing); the worker
    # sends nothing to a confirmed address.
    assert drain() == ["status_subscriber.confirmation_requested"]
    assert len(emails()) == 2
    [confirmed] = stored(site["page_id"])
    assert confirmed.status == "confirmed" and confirmed.component_ids == [site["billing"]]


def test_an_expired_pending_subscriber_is_replaced_and_its_link_is_a_404_page(client: Any, site: Any) -> None:
    subscribe_json(client, {"email": "ana@example.com"})
    drain()
    old_link = confirm_path(emails()[0])
    clock.freeze(NOW + timedelta(hours=49))
    expired = client.http.post(old_link, headers=FORM, body="")
    assert expired.status_code == 404 and "This link has expired" in html(expired)
    assert client.http.get(old_link).status_code == 404

    assert subscribe_json(client, {"email": "ana@example.com"}).status_code == 202
    [fresh] = stored(site["page_id"])
    assert fresh.status == "pending" and fresh.created_at == NOW + timedelta(hours=49)
    assert len(list(SubscriberItem.query(site["page_id"]))) == 2  # the new subscriber and its guard
    drain()
    assert client.http.post(confirm_path(emails()[-1]), headers=FORM, body="").status_code == 200


def test_a_racing_subscribe_of_the_same_address_makes_one_subscriber(
    client: Any, site: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    subscribe_json(client, {"email": "ana@example.com"})
    real_get = repository.get_item
    stale_reads = iter([None])  # the first guard read misses the subscriber written meanwhile

    def racing_read(page_id: str, item_key: str) -> SubscriberItem | None:
        if item_key.startswith("ADDR#"):
            return next(stale_reads, real_get(page_id, item_key))
        return real_get(page_id, item_key)

    monkeypatch.setattr(repository, "get_item", racing_read)
    assert subscribe_json(client, {"email": "ana@example.com"}).status_code == 202
    assert len(stored(site["page_id"])) == 1


def test_the_form_answers_html_and_shows_problems_next_to_their_field(client: Any, site: Any) -> None:
    sent = subscribe_form(client, [("email", "ana@example.com"), ("component_ids", site["billing"])])
    assert sent.status_code == 202
    assert "Check your inbox" in html(sent)
    assert stored(site["page_id"])[0].component_ids == [site["billing"]]

    refused = subscribe_form(client, [("email", "not an address"), ("component_ids", site["checkout"])])
    assert refused.status_code == 400
    page = html(refused)
    assert 'id="subscribe-email-problem"' in page and "Enter an email address like name@example.com." in page
    assert 'aria-invalid="true"' in page and 'value="not an address"' in page
    assert f'value="{site["checkout"]}" checked' in page and "<details open>" in page

    unknown = subscribe_form(client, [("email", "bo@example.com"), ("component_ids", "cmp_nope")])
    assert unknown.status_code == 400 and "no such component on this status page" in html(unknown)

    missing = subscribe_form(client, [("email", "bo@example.com")], slug="nope")
    assert missing.status_code == 404 and "Status page not found" in html(missing)


def test_json_errors_name_the_field_and_never_write(client: Any, site: Any) -> None:
    cases = [
        ({"email": "nope"}, "email"),
        ({"email": "ana@example.com", "component_ids": ["cmp_nope"]}, "component_ids.0"),
        ({"email": "ana@example.com", "url": "http://127.0.0.1/hook"}, "url"),
        ({"email": "ana@example.com", "surprise": 1}, "surprise"),
    ]
    for body, field in cases:
        answer = subscribe_json(client, body)
        assert answer.status_code == 400, body
        error = json.loads(answer.body)["error"]
        assert error["code"] == "VALIDATION_ERROR" and field in [f["field"] for f in error["details"]["fields"]], error
    assert json.loads(client.http.post("/status/acme/subscribe", headers=JSON, body="{").body)["success"] is False
    assert subscribe_json(client, {"email": "ana@example.com"}, slug="nope").status_code == 404
    assert stored(site["page_id"]) == [] and drain() == []


def test_confirming_a_webhook_subscriber_shows_the_secret_its_deliveries_verify_with(
    client: Any, site: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.delivery import targets
    from chalicelib.integration.signing import signed_headers, verify_custom

    monkeypatch.setattr(targets, "default_resolve", lambda host, port: ["93.184.216.34"])
    assert subscribe_json(client, {"email": "ops@example.com", "url": "https://hooks.example.com/s"}).status_code == 202
    drain()
    link = confirm_path(emails()[-1])
    assert "secret" not in html(client.http.get(link))  # a mail scanner's GET shows nothing of it
    page = html(client.http.post(link, headers=FORM, body=""))
    [hook] = stored(site["page_id"])
    secret = links.webhook_secret(site["page_id"], hook.subscriber_id, settings=get_settings())
    assert secret in page and "X-Service-Signature" in page
    # The secret shown is the one deliveries are signed with.
    headers = signed_headers(
        notice_webhooks.signing_secret(site["page_id"], hook.subscriber_id, settings=get_settings()),
        1_700_000_000,
        b"{}",
    )
    assert verify_custom(secret, headers, b"{}", now=1_700_000_000) == 1_700_000_000
    assert secret in html(client.http.post(link, headers=FORM, body=""))  # shown again, already confirmed
    # An email subscriber's confirmation shows no secret.
    assert subscribe_json(client, {"email": "ana@example.com"}).status_code == 202
    drain()
    assert "X-Service-Signature" not in html(client.http.post(confirm_path(emails()[-1]), headers=FORM, body=""))


def test_rate_limits_per_caller_address_and_per_email_address(client: Any, site: Any) -> None:
    for attempt in range(3):
        assert subscribe_json(client, {"email": "ana@example.com"}).status_code == 202, attempt
    limited = subscribe_json(client, {"email": "ana@example.com"})
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) > 60
    assert json.loads(limited.body)["error"]["code"] == "RATE_LIMITED"
    assert subscribe_json(client, {"email": "bo@example.com"}).status_code == 202  # another address
    form_limited = subscribe_form(client, [("email", "ana@example.com")])
    assert form_limited.status_code == 429 and "Too many requests" in html(form_limited)

    reconfigure(RATE_LIMIT_STATUS_SUBSCRIBE="6")  # six spent above
    caller_limited = subscribe_json(client, {"email": "cy@example.com"})
    assert caller_limited.status_code == 429
    assert caller_limited.headers["X-RateLimit-Category"] == "status_subscribe"
    assert client.http.get("/status/acme/summary.json").status_code == 200  # reads keep their own bucket


def test_unsubscribe_page_button_and_rfc_8058_one_click(client: Any, site: Any) -> None:
    subscribe_json(client, {"email": "ana@example.com"})
    drain()
    client.http.post(confirm_path(emails()[0]), headers=FORM, body="")
    [subscriber] = stored(site["page_id"])
    token = sign(
        SubscriberLink("unsubscribe", site["page_id"], subscriber.subscriber_id or ""), settings=get_settings()
    )
    link = f"/status/acme/unsubscribe?token={token}"

    shown = client.http.get(link)
    assert shown.status_code == 200 and html(shown).count("<button") == 1
    assert len(stored(site["page_id"])) == 1

    one_click = client.http.post(link, headers=FORM, body="List-Unsubscribe=One-Click")
    assert one_click.status_code == 200 and "You are unsubscribed" in html(one_click)
    assert list(SubscriberItem.query(site["page_id"])) == []  # the guard went with it

    again = client.http.post(link, headers=FORM, body="List-Unsubscribe=One-Click")
    assert again.status_code == 200 and "Not subscribed" in html(again)
    assert "Not subscribed" in html(client.http.get(link))
    assert subscribe_json(client, {"email": "ana@example.com"}).status_code == 202  # may come back


def test_bad_and_forged_tokens_get_a_400_page(client: Any, site: Any) -> None:
    confirm_token = sign(SubscriberLink("confirm", site["page_id"], "sub_" + "0" * 24), settings=get_settings())
    for path in (
        "/status/acme/confirm?token=garbage",
        "/status/acme/confirm",
        f"/status/acme/unsubscribe?token={confirm_token}",  # a confirm token cannot unsubscribe
        f"/status/acme/confirm?token={confirm_token}x",
    ):
        for method in ("GET", "POST"):
            answer = client.http.request(method, path, headers=FORM, body=b"")
            assert answer.status_code == 400, (method, path)
            assert "This link is not valid" in html(answer)
    unknown = client.http.post(f"/status/acme/confirm?token={confirm_token}", headers=FORM, body="")
    assert unknown.status_code == 404 and "This link has expired" in html(unknown)
    assert client.http.get(f"/status/acme/confirm?token={confirm_token}&x=1").status_code == 400


def managed(site: Any, suffix: str = "") -> str:
    return f"/api/v1/status-pages/{site['page_id']}/subscribers{suffix}"


def test_managers_list_count_and_remove(client: Any, site: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib.delivery import targets

    monkeypatch.setattr(targets, "default_resolve", lambda host, port: ["93.184.216.34"])
    key = site["org"].owner_key
    subscribe_json(client, {"email": "ana@example.com"})
    subscribe_json(client, {"email": "ops@example.com", "url": "https://hooks.example.com/s"})
    drain()
    client.http.post(confirm_path(emails()[0]), headers=FORM, body="")

    answer = call(client, "GET", managed(site), key)
    listed = answer.json
    assert answer.status_code == 200
    assert [(s["email"], s["kind"], s["status"]) for s in listed["data"]["items"]] == [
        ("ana@example.com", "email", "confirmed"),
        ("ops@example.com", "webhook", "pending"),
    ]
    assert listed["data"]["total"] == 2 and listed["data"]["items"][1]["url"] == "https://hooks.example.com/s"
    _, webhooks = call(client, "GET", managed(site, "?kind=webhook&status=pending"), key)
    assert [s["email"] for s in webhooks["data"]["items"]] == ["ops@example.com"]
    assert call(client, "GET", managed(site, "?status=gone"), key).status_code == 400
    _, counted = call(client, "GET", managed(site, "/count"), key)
    assert counted["data"] == {"total": 2, "confirmed": 1, "pending": 1, "email": 1, "webhook": 1}

    ana = listed["data"]["items"][0]["id"]
    answer = call(client, "DELETE", managed(site, f"/{ana}"), key)
    removed = answer.json
    assert answer.status_code == 200 and removed["data"] == {"id": ana, "deleted": True}
    assert call(client, "DELETE", managed(site, f"/{ana}"), key).status_code == 404
    assert call(client, "DELETE", managed(site, "/nonsense"), key).status_code == 404
    assert repository.get_item(site["page_id"], "ADDR#ana@example.com") is None
    assert call(client, "GET", managed(site, "/count"), key).json["data"]["total"] == 1


def test_managers_need_the_scope_and_their_own_page(client: Any, site: Any) -> None:
    readonly = site["org"].readonly_key  # incidents:read only
    assert call(client, "GET", managed(site), readonly).status_code == 403
    assert call(client, "GET", managed(site, "/count"), readonly).status_code == 403
    assert call(client, "DELETE", managed(site, "/sub_" + "0" * 24), readonly).status_code == 403
    other = make_org("Other")
    assert call(client, "GET", managed(site), other.owner_key).status_code == 404
    assert call(client, "GET", managed(site, "/count"), other.owner_key).status_code == 404
    assert client.http.get(managed(site)).status_code == 401


def test_the_status_page_carries_the_subscribe_form(client: Any, site: Any) -> None:
    answer = client.http.get("/status/acme")
    assert answer.status_code == 200
    page = answer.body.decode()
    assert "form-action 'self'" in answer.headers["Content-Security-Policy"]
    assert '<form class="card" method="post" action="acme/subscribe">' in page
    assert '<label for="subscribe-email">Email address</label>' in page
    assert f'value="{site["checkout"]}"' in page and f'value="{site["billing"]}"' in page
    assert "<legend>APIs</legend>" in page and "<script" not in page
