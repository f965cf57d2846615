"""The local stage's Slack sink and GET /local/outbox: through chalice.test.Client, and end to end on
the local HTTP server (paging with the default local settings: Slack goes to the built-in sink)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, reconfigure
from tests.kit import factories as make

# The plain app has no /local routes: only the local server mounts them (tests/api/conftest.py).
pytestmark = pytest.mark.usefixtures("local_routes")

SINK = "/local/slack/api/chat.postMessage"
OUTBOX = "/local/outbox"


def post_sink(
    client: Any, body: Any, token: str | None = "xoxb-anything", content_type: str = "application/json"
) -> Any:
    headers = {"Content-Type": content_type}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    raw = body if isinstance(body, str) else json.dumps(body)
    response = client.http.post(SINK, headers=headers, body=raw)
    response.json = json.loads(response.body)
    return response


def get_outbox(client: Any, query: str = "") -> Any:
    response = client.http.get(OUTBOX + query)
    response.json = json.loads(response.body)
    return response


def test_the_sink_answers_like_slack_and_the_outbox_lists_its_messages(client: Any) -> None:
    first = post_sink(client, {"channel": "U0ANA", "text": "[SEV1][high] INC-2026-0001: Checkout down"})
    assert first.status_code == 200
    assert first.json["ok"] is True and first.json["channel"] == "U0ANA" and first.json["ts"]
    second = post_sink(
        client,
        {
            "channel": "U0BO",
            "text": "second",
            "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "second"}}],
            "metadata": {"event_type": "tocsin_incident_paged", "event_payload": {"incident_number": "INC-2026-0002"}},
        },
    )
    assert second.json["ok"] is True

    response = get_outbox(client)
    assert response.status_code == 200
    assert response.json["success"] is True and response.json["meta"]["request_id"]
    data = response.json["data"]
    assert data["total"] == 2
    assert [(i["channel"], i["to"], i["incident_number"]) for i in data["items"]] == [
        ("slack", "U0BO", "INC-2026-0002"),
        ("slack", "U0ANA", "INC-2026-0001"),
    ]
    assert set(data["items"][0]) == {"channel", "to", "subject", "text", "sent_at", "incident_number", "id", "blocks"}
    assert data["items"][0]["blocks"] == [{"type": "section", "text": {"type": "mrkdwn", "text": "second"}}]
    assert data["items"][1]["blocks"] is None
    assert data["items"][0]["subject"] is None and data["items"][0]["sent_at"].endswith("Z")


REFUSALS: list[tuple[Any, str | None, str]] = [
    ({"channel": "U0ANA", "text": "hi"}, None, "not_authed"),
    ({"channel": "U0ANA", "text": "hi"}, "", "not_authed"),
    ({"channel": "U_FAIL", "text": "hi"}, "xoxb-x", "channel_not_found"),
    ({"text": "hi"}, "xoxb-x", "channel_not_found"),
    ({"channel": "U0ANA"}, "xoxb-x", "no_text"),
    ("{not json", "xoxb-x", "invalid_json"),
    ("[1, 2]", "xoxb-x", "invalid_json"),
    ({"channel": "U0ANA", "text": "hi", "blocks": -5.0}, "xoxb-x", "invalid_blocks_format"),
    ({"channel": "U0ANA", "text": "hi", "blocks": [1]}, "xoxb-x", "invalid_blocks_format"),
]


def test_the_sink_refuses_like_slack(client: Any) -> None:
    for body, token, error in REFUSALS:
        response = post_sink(client, body, token=token)
        assert (response.status_code, response.json) == (200, {"ok": False, "error": error}), body
    assert get_outbox(client).json["data"]["items"] == []


def test_the_sink_accepts_form_bodies(client: Any) -> None:
    body = urllib.parse.urlencode({"channel": "U0CY", "text": "form INC-2026-0003"})
    response = post_sink(client, body, content_type="application/x-www-form-urlencoded")
    assert response.json["ok"] is True
    [item] = get_outbox(client, "?channel=slack").json["data"]["items"]
    assert (item["to"], item["incident_number"]) == ("U0CY", "INC-2026-0003")


def test_outbox_query_validation(client: Any) -> None:
    cases = [("?limit=0", "limit"), ("?limit=501", "limit"), ("?limit=x", "limit"), ("?channel=fax", "channel")]
    for query, field in [*cases, ("?x=1", "x")]:
        response = get_outbox(client, query)
        assert response.status_code == 400, query
        assert response.json["error"]["code"] == "VALIDATION_ERROR"
        assert [f["field"] for f in response.json["error"]["details"]["fields"]] == [field]
    assert (
        get_outbox(client, "?limit=500&channel=email&to=a@example.com&incident_number=INC-2026-0001").status_code == 200
    )


def test_both_routes_are_404_outside_the_local_stage(client: Any) -> None:
    from chalicelib.settings import get_settings

    reconfigure(TOCSIN_STAGE="dev")
    assert not get_settings().is_local  # cached now: the test client's stage variables do not change it
    for response in (get_outbox(client), post_sink(client, {"channel": "U0ANA", "text": "hi"})):
        assert response.status_code == 404
        assert response.json["success"] is False
        assert response.json["error"]["code"] == "NOT_FOUND"


def test_the_routes_are_documented_as_local_only(client: Any) -> None:
    document = json.loads(client.http.get("/api/v1/openapi.json").body)
    assert "404" in document["paths"][OUTBOX]["get"]["responses"]
    assert document["paths"][SINK]["post"]["security"] == []
    assert "Local stage only" in document["paths"][OUTBOX]["get"]["summary"]


# ---------------------------------------------------------------- on the local HTTP server


@pytest.fixture
def served(aws_env: None) -> Iterator[str]:
    """The app on a real loopback server, with the local defaults: Slack goes to its own sink."""
    from app import app
    from chalicelib.local import routes as local_routes
    from chalicelib.local.emulator import free_port
    from chalicelib.local.server import start_server

    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    reconfigure(PUBLIC_BASE_URL=base_url)
    server, _ = start_server(app, "127.0.0.1", port)  # mounts the /local routes
    yield base_url
    server.server.shutdown()
    server.server.server_close()
    local_routes.unmount(app)


def http(method: str, url: str, key: str | None = None, body: Any = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_page_on_the_local_stack_shows_up_in_the_outbox(served: str, org: Org) -> None:
    from chalicelib.directory import users
    from chalicelib.settings import get_settings

    assert get_settings().slack_api_url() == f"{served}/local/slack/api"
    svc = make.service(org, "Checkout")
    users.create_user(
        organization_id=org.organization_id, name="Ana", email="ana@example.com", slack_user_id="U0ANA", now=NOW
    )
    users.create_user(
        organization_id=org.organization_id, name="Fay", email="fay@example.com", slack_user_id="U_FAIL", now=NOW
    )
    status, created = http(
        "POST", f"{served}/api/v1/incidents", org.owner_key, {"title": "Pay <down>", "service_ids": [svc.service_key]}
    )
    assert status == 201, created
    number = created["data"]["incident_number"]

    status, paged = http(
        "POST",
        f"{served}/api/v1/incidents/{number}/page",
        org.owner_key,
        {"email": "ana@example.com", "channels": ["email", "slack"], "message": "Join the bridge"},
    )
    assert status == 200, paged
    assert [d["sent"] for d in paged["data"]["deliveries"]] == [True, True]

    status, failed = http(
        "POST",
        f"{served}/api/v1/incidents/{number}/page",
        org.owner_key,
        {"email": "fay@example.com", "channels": ["slack"]},
    )
    assert status == 502, failed
    assert failed["error"]["details"]["deliveries"][0]["error_code"] == "SLACK_channel_not_found"

    status, listed = http("GET", f"{served}/local/outbox?incident_number={number}")
    assert status == 200
    items = listed["data"]["items"]
    assert sorted((i["channel"], i["to"]) for i in items) == [("email", "ana@example.com"), ("slack", "U0ANA")]
    email = next(i for i in items if i["channel"] == "email")
    assert email["subject"] == f"[SEV3][low] {number}: Pay <down>"
    assert "Join the bridge" in email["text"] and email["sent_at"]
    # The email's one-click links, as sent: in the HTML, in the text, and by label.
    assert sorted(email["action_links"]) == ["Acknowledge", "Resolve"]
    for url in email["action_links"].values():
        assert url.startswith(f"{served}/app/email-actions/e1.") and url in email["text"]
        assert f'href="{url}"' in email["html"]
        with urllib.request.urlopen(url, timeout=10) as opened:  # opening one only asks to confirm
            assert opened.status == 200 and b'method="post"' in opened.read()
    status, still = http("GET", f"{served}/api/v1/incidents/{number}", org.owner_key)
    assert status == 200 and still["data"]["acknowledged_at"] is None
    slack = next(i for i in items if i["channel"] == "slack")
    assert slack["incident_number"] == number and "Pay <down>" in slack["text"]  # mrkdwn escapes undone


# ---------------------------------------------------------------- what a page carries, as sent


ALERTMANAGER_DELIVERY = {
    "version": "4",
    "groupKey": '{}:{alertname="HighErrorRate"}',
    "status": "firing",
    "receiver": "tocsin",
    "groupLabels": {"alertname": "HighErrorRate"},
    "commonLabels": {"alertname": "HighErrorRate", "severity": "critical", "env": "prod", "job": "checkout-api"},
    "commonAnnotations": {
        "summary": "High error rate on checkout",
        "runbook_url": "https://runbooks.example/checkout/high-error-rate",
    },
    "externalURL": "https://alertmanager.example",
    "alerts": [
        {
            "status": "firing",
            "labels": {"alertname": "HighErrorRate", "instance": "checkout-api-1", "severity": "critical"},
            "annotations": {"description": "Error rate above 5% for 10 minutes. Customers see 500s."},
            "startsAt": "2026-11-22T11:58:00Z",
            "generatorURL": "https://prometheus.example/graph?g0.expr=rate",
        }
    ],
}


@pytest.fixture
def frozen_clock() -> Iterator[None]:
    """The server's thread reads the same clock: the page's times are NOW's."""
    from chalicelib import clock

    with clock.frozen(NOW):
        yield


@pytest.mark.usefixtures("frozen_clock")
def test_a_page_about_an_alert_carries_what_a_responder_needs_on_every_channel(served: str, org: Org) -> None:
    from chalicelib.catalog import service as services
    from chalicelib.directory import users
    from chalicelib.incident import repository
    from chalicelib.integration import admin
    from chalicelib.local import outbox
    from chalicelib.notification import service
    from chalicelib.notification.channels import Recipient

    svc = services.create_service(organization_id=org.organization_id, name="Checkout", now=NOW)
    issued = admin.create_integration(
        organization_id=org.organization_id,
        integration_type="alertmanager",
        name="Prometheus",
        now=NOW,
        default_service_key=svc.service_key,
        settings=get_settings(),
    )
    ana = users.create_user(
        organization_id=org.organization_id,
        name="Ana",
        email="ana@example.com",
        slack_user_id="U0ANA",
        time_zone="Europe/Paris",
        now=NOW,
    )
    request = urllib.request.Request(
        f"{served}/webhooks/{issued.routing_key}",
        data=json.dumps(ALERTMANAGER_DELIVERY).encode(),
        headers={"Content-Type": "application/json", "X-Forwarded-Proto": "https"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as delivered:
        number = json.loads(delivered.read())["incident"]["id"]
    status, paged = http(
        "POST",
        f"{served}/api/v1/incidents/{number}/page",
        org.owner_key,
        {"email": "ana@example.com", "channels": ["email", "slack"], "message": "Join the bridge"},
    )
    assert status == 200, paged
    incident = repository.get_incident(org.organization_id, number)
    phone = Recipient(ana.user_id, "Ana", None, None, "+15551230001", time_zone=ana.time_zone)
    service.notify(
        organization_id=org.organization_id,
        incident=incident,
        recipient=phone,
        channels=["sms", "voice"],
        message=None,
        now=NOW,
        actor="escalation",
        settings=get_settings(),
    )

    console = f"{served}/app/incidents/{number}"
    items = {item.channel: item for item in outbox.list_outbox(incident_number=number)}
    assert set(items) == {"email", "slack", "sms", "voice"}

    email = items["email"]
    assert email.subject == f"[SEV0][high] {number}: High error rate on checkout"
    text = email.text
    for line in (
        "Service: Checkout",
        "Severity SEV0, high urgency.",
        "Join the bridge",
        "[firing] HighErrorRate checkout-api-1: Error rate above 5% for 10 minutes. Customers see 500s.",
        "alertname: HighErrorRate",
        "env: prod",
        "job: checkout-api",
        f"Open the incident ({console})",
        "Source: Alertmanager (https://alertmanager.example)",
    ):
        assert line in text.splitlines(), line
    assert "severity: critical" not in text  # shown as SEV0 already
    # Times in Ana's zone (Paris, CET in November), each action link on a line of its own.
    assert any(line.startswith("Opened: Sun 22 Nov 2026, 13:00 CET") for line in text.splitlines())
    assert text.splitlines()[-1] == "Paged by Tocsin on Sun 22 Nov 2026, 13:00 CET."
    assert [line.split(" (")[0] for line in text.splitlines() if "/email-actions/" in line] == [
        "Acknowledge",
        "Resolve",
    ]
    assert email.sent_at == "2026-11-22T12:00:00.000Z"

    slack = items["slack"]
    blocks = json.dumps(slack.blocks)
    assert "Error rate above 5%" in blocks and "`env=prod`" in blocks and "Sun 22 Nov 2026, 13:00 CET" in blocks
    assert "<https://alertmanager.example|Source: Alertmanager>" in blocks

    assert (
        items["sms"].text
        == f"[SEV0] {number} Checkout: High error rate on checkout.\n{console}\nReply 4 to ack, 6 to resolve."
    )
    spoken = items["voice"].text
    assert "on Checkout" in spoken and "Error rate above 5% for 10 minutes." in spoken
    assert "Customers see" not in spoken and "http" not in spoken


@pytest.mark.usefixtures("frozen_clock")
def test_a_runbook_the_source_gives_is_linked_on_the_page(served: str, org: Org) -> None:
    from chalicelib.catalog import service as services
    from chalicelib.directory import users
    from chalicelib.integration import admin
    from chalicelib.local import outbox

    svc = services.create_service(organization_id=org.organization_id, name="Checkout", now=NOW)
    issued = admin.create_integration(
        organization_id=org.organization_id,
        integration_type="custom",
        name="Scripts",
        now=NOW,
        default_service_key=svc.service_key,
        settings=get_settings(),
    )
    users.create_user(organization_id=org.organization_id, name="Bo", email="bo@example.com", now=NOW)
    body = {
        "title": "Disk almost full",
        "service_id": svc.service_id,
        "description": "db-1 /var at 93%.",
        "source_url": "https://grafana.example/d/disks",
        "metadata": {"host": "db-1", "runbook_url": "https://runbooks.example/disk-full"},
    }
    request = urllib.request.Request(
        f"{served}/webhooks/{issued.routing_key}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "X-Forwarded-Proto": "https"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as delivered:
        number = json.loads(delivered.read())["incident"]["id"]
    status, _ = http(
        "POST",
        f"{served}/api/v1/incidents/{number}/page",
        org.owner_key,
        {"email": "bo@example.com", "channels": ["email"]},
    )
    assert status == 200
    [email] = outbox.list_outbox(incident_number=number)
    lines = email.text.splitlines()
    assert "Runbook: https://runbooks.example/disk-full" in lines
    assert "Source: Custom webhook (https://grafana.example/d/disks)" in lines
    assert "host: db-1" in lines and "runbook_url: https://runbooks.example/disk-full" not in lines
    # Bo chose no zone and the organization has none: UTC, named.
    assert lines[-1] == "Paged by Tocsin on Sun 22 Nov 2026, 12:00 UTC."
