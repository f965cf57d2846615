"""Outbound webhook subscriptions in the console: list, create (secret once), disable and enable,
rotate, delete, and the deliveries with their pages; webhooks:write for all of it, as in the API."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.outbound import subscriptions
from chalicelib.outbound.tables import WebhookDeliveryRecord
from chalicelib.settings import get_settings
from tests.conftest import Org
from tests.console.conftest import CONFIRMED, ROLES, ConsoleClient, action_forms
from tests.kit.console import problems_at

URL = "https://93.184.216.34/hooks/tocsin"
OTHERS = ("responder", "viewer")


def api(client: Any, org: Org, path: str) -> tuple[int, Any]:
    answer = client.http.get(path, headers={"Authorization": f"Bearer {org.owner_key}"})
    return answer.status_code, json.loads(answer.body)


def subscribed(org: Org) -> str:
    created = subscriptions.create_subscription(
        organization_id=org.organization_id,
        url=URL,
        event_types=["*"],
        now=clock.now(),
        owner_email="ops@acme.test",
        settings=get_settings(),
    )
    return str(created.record.subscription_id)


def deliver(org: Org, subscription_id: str, count: int) -> None:
    start = clock.now() - timedelta(hours=1)
    for minute in range(count):
        occurred = start + timedelta(minutes=minute)
        WebhookDeliveryRecord(
            subscription_id,
            f"{clock.isoformat(occurred)}#evt-{minute}",
            organization_id=org.organization_id,
            event_id=f"evt-{minute}",
            event_type="incident.resolved",
            body="{}",
            status="failed" if minute == 0 else "succeeded",
            attempts=5 if minute == 0 else 1,
            last_attempt_at=occurred,
            next_attempt_at=None,
            last_error="HTTP 500" if minute == 0 else None,
            response_code=500 if minute == 0 else 204,
            created_at=occurred,
            expires_at=occurred + timedelta(days=30),
        ).save()


def subscription_ids(org: Org) -> list[str]:
    return [str(r.subscription_id) for r in subscriptions.list_subscriptions(organization_id=org.organization_id)]


@pytest.mark.parametrize("role", ROLES)
def test_the_webhook_pages_render_for_every_role(
    role: str, signed_in: Callable[[str], ConsoleClient], org: Org
) -> None:
    subscription_id = subscribed(org)
    deliver(org, subscription_id, 2)
    browser = signed_in(role)
    listing = browser.get("/app/webhooks")
    detail = browser.get(f"/app/webhooks/{subscription_id}")
    assert listing.status == detail.status == 200
    assert len(listing.dom().find_all("h1")) == len(detail.dom().find_all("h1")) == 1
    if role in ("owner", "admin"):
        assert URL in listing.text() and "ops@acme.test" in listing.text()
        assert action_forms(listing) == ["/app/webhooks"]
        assert "HTTP 500" in detail.text() and "HTTP 204" in detail.text()
        assert {f.rsplit("/", 1)[1] for f in action_forms(detail)} == {"disable", "rotate-secret", "delete"}
    else:
        assert action_forms(listing) == action_forms(detail) == []
        assert URL not in listing.body and URL not in detail.body
        assert "Only owners and admins" in detail.text()


def test_create_shows_the_secret_once(signed_in: Callable[[str], ConsoleClient], org: Org, client: Any) -> None:
    browser = signed_in("admin")
    page = browser.get("/app/webhooks")
    assert "No webhook subscriptions." in page.text()
    assert page.dom().find("input", name="owner_email").attrs.get("value") == "admin@acme.test"
    created = browser.post(
        "/app/webhooks",
        [
            ("url", URL),
            ("event_types", "incident.triggered"),
            ("event_types", "incident.resolved"),
            ("description", "Chat bridge"),
            ("owner_email", "admin@acme.test"),
        ],
    )
    assert created.status == 200 and created.headers.get("cache-control") == "no-store"
    secret = created.dom().find(id="signing-secret").text()
    assert secret.startswith("whsec_")
    _, listed = api(client, org, "/api/v1/webhook-subscriptions")
    (item,) = listed["data"]["items"]
    assert (item["url"], sorted(item["event_types"]), item["description"], item["owner_email"]) == (
        URL,
        ["incident.resolved", "incident.triggered"],
        "Chat bridge",
        "admin@acme.test",
    )
    assert secret not in browser.get("/app/webhooks").body
    assert secret not in browser.get(f"/app/webhooks/{item['subscription_id']}").body


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ([("url", "http://93.184.216.34/x"), ("event_types", "*")], "url"),
        ([("url", "https://127.0.0.1/x"), ("event_types", "*")], "url"),
        ([("url", URL)], "event_types"),
        ([("url", URL), ("event_types", "incident.exploded")], "event_types"),
        ([("url", URL), ("event_types", "*"), ("event_types", "incident.resolved")], "event_types"),
        ([("url", URL), ("event_types", "*"), ("owner_email", "not an email")], "owner_email"),
    ],
)
def test_bad_subscription_input_is_shown_on_the_page(
    fields: list[tuple[str, str]], field: str, signed_in: Callable[[str], ConsoleClient], org: Org
) -> None:
    browser = signed_in("owner")
    browser.get("/app/webhooks")
    answer = browser.post("/app/webhooks", fields)
    assert answer.status == 400, answer.text()
    assert answer.dom().find("h1").text() == "Webhooks"
    assert answer.dom().find(cls="problem").text()
    assert len(problems_at(answer, field)) == 1  # at its input, once, not repeated at the top
    assert subscription_ids(org) == []


def test_disable_enable_rotate_and_delete(signed_in: Callable[[str], ConsoleClient], org: Org, client: Any) -> None:
    subscription_id = subscribed(org)
    here = f"/app/webhooks/{subscription_id}"
    browser = signed_in("owner")
    browser.get(here)
    disabled = browser.post(here + "/disable", {"version": "1"})
    assert disabled.status == 303 and disabled.location == here + "?done=webhook_disabled"
    _, document = api(client, org, f"/api/v1/webhook-subscriptions/{subscription_id}")
    assert (document["data"]["enabled"], document["data"]["disabled_reason"]) == (False, "manual")
    stale = browser.post(here + "/enable", {"version": "1"})  # the page's version is from before
    assert stale.status == 409 and "changed since version 1" in stale.text()
    page = browser.follow(disabled)
    assert here + "/enable" in action_forms(page)
    enabled = browser.post(here + "/enable", {"version": str(document["data"]["version"])})
    assert enabled.status == 303
    assert api(client, org, f"/api/v1/webhook-subscriptions/{subscription_id}")[1]["data"]["enabled"] is True

    browser.get(here)
    rotated = browser.post(here + "/rotate-secret", CONFIRMED)
    assert rotated.status == 200
    secret = rotated.dom().find(id="signing-secret").text()
    record = subscriptions.get_subscription(organization_id=org.organization_id, subscription_id=subscription_id)
    assert subscriptions.get_secret(record, settings=get_settings()) == secret

    deleted = browser.post(here + "/delete", CONFIRMED)
    assert deleted.status == 303 and deleted.location == "/app/webhooks?done=webhook_deleted"
    assert subscription_ids(org) == []
    assert browser.get(here).status == 404
    browser.get("/app/webhooks")
    assert browser.post(here + "/delete", CONFIRMED).status == 404


def test_deliveries_are_paged_newest_first(signed_in: Callable[[str], ConsoleClient], org: Org) -> None:
    subscription_id = subscribed(org)
    deliver(org, subscription_id, 25)
    browser = signed_in("admin")
    first = browser.get(f"/app/webhooks/{subscription_id}")
    rows = first.dom().find("table").find_all("tr")[1:]
    assert len(rows) == 20
    links = [a for a in first.dom().find_all("a") if "cursor=" in str(a.attrs.get("href", ""))]
    assert [a.text() for a in links] == ["Older deliveries"]
    second = browser.get(str(links[0].attrs["href"]))
    assert second.status == 200
    assert len(second.dom().find("table").find_all("tr")[1:]) == 5
    assert "HTTP 500" in second.text() and "HTTP 500" not in first.text()  # the oldest one failed
    assert browser.get(f"/app/webhooks/{subscription_id}?cursor=garbage").status == 400


@pytest.mark.parametrize("role", OTHERS)
def test_a_forged_webhook_post_from_a_lower_role_is_refused(
    role: str, signed_in: Callable[[str], ConsoleClient], org: Org
) -> None:
    subscription_id = subscribed(org)
    here = f"/app/webhooks/{subscription_id}"
    browser = signed_in(role)
    browser.get("/app/webhooks")
    assert browser.post("/app/webhooks", {"url": URL, "event_types": "*"}).status == 403
    for action in ("/disable", "/enable", "/rotate-secret", "/delete"):
        assert browser.post(here + action, {"version": "1"}).status == 403, action
    record = subscriptions.get_subscription(organization_id=org.organization_id, subscription_id=subscription_id)
    assert (subscription_ids(org), record.enabled, int(record.version or 0)) == ([subscription_id], True, 1)


@pytest.mark.parametrize("csrf", ["-", "bad"])
def test_webhook_forms_refuse_a_missing_or_wrong_csrf_token(
    csrf: str, signed_in: Callable[[str], ConsoleClient], org: Org
) -> None:
    subscription_id = subscribed(org)
    browser = signed_in("owner")
    browser.get(f"/app/webhooks/{subscription_id}")
    assert browser.post(f"/app/webhooks/{subscription_id}/delete", csrf=csrf).status == 403
    assert subscription_ids(org) == [subscription_id]
