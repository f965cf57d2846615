"""The local voice sink (Twilio's Calls API) and GET /local/outbox?channel=sms|voice: through
chalice.test.Client, and end to end on the local HTTP server (the voice channel's local defaults
point at the sink)."""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.notification.channels import Recipient
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, reconfigure
from tests.kit import factories as make

pytestmark = pytest.mark.usefixtures("local_routes")

SID = "AC00000000000000000000000000local"
SINK = f"/local/voice/2010-04-01/Accounts/{SID}/Calls.json"
OUTBOX = "/local/outbox"
TWIML = (
    '<Response><Gather numDigits="1" action="http://x/integrations/voice/callback?incident_number=INC-2026-0009">'
    '<Say loop="2">Severity 1 &amp; more</Say></Gather><Say>Goodbye.</Say></Response>'
)


def basic(user: str, password: str = "pw") -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def post_call(client: Any, form: dict[str, str], authorization: str | None = None, path: str = SINK) -> Any:
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    headers["Authorization"] = authorization if authorization is not None else basic(SID)
    response = client.http.post(path, headers=headers, body=urllib.parse.urlencode(form))
    response.json = json.loads(response.body)
    return response


def get_outbox(client: Any, query: str = "") -> Any:
    response = client.http.get(OUTBOX + query)
    response.json = json.loads(response.body)
    return response


def test_the_sink_answers_like_twilio_and_the_outbox_lists_the_call(client: Any) -> None:
    response = post_call(client, {"To": "+15551234567", "From": "+15005550006", "Twiml": TWIML})
    assert response.status_code == 201
    answer = response.json
    assert answer["sid"].startswith("CA") and len(answer["sid"]) == 34
    assert (answer["status"], answer["to"], answer["from"], answer["account_sid"]) == (
        "queued",
        "+15551234567",
        "+15005550006",
        SID,
    )
    [item] = get_outbox(client, "?channel=voice").json["data"]["items"]
    assert (item["channel"], item["to"], item["incident_number"], item["id"]) == (
        "voice",
        "+15551234567",
        "INC-2026-0009",
        answer["sid"],
    )
    assert item["text"] == "Severity 1 & more Goodbye."
    assert item["voice"] == {"from": "+15005550006", "twiml": TWIML}
    assert item["sent_at"].endswith("Z") and "blocks" not in item and "webhook" not in item


REFUSALS: list[tuple[dict[str, str], str | None, int, int]] = [
    ({"To": "+15551234567", "From": "+15005550006", "Twiml": TWIML}, "", 401, 20003),
    ({"To": "+15551234567", "From": "+15005550006", "Twiml": TWIML}, "Bearer x", 401, 20003),
    ({"To": "+15551234567", "From": "+15005550006", "Twiml": TWIML}, basic("ACother"), 401, 20003),
    ({"To": "+15551234567", "From": "+15005550006", "Twiml": TWIML}, basic(SID, ""), 401, 20003),
    ({"To": "+15551234567", "From": "+15005550006", "Twiml": TWIML}, "Basic !!!", 401, 20003),
    ({"From": "+15005550006", "Twiml": TWIML}, None, 400, 21211),
    ({"To": "+15005550001", "From": "+15005550006", "Twiml": TWIML}, None, 400, 21211),
    ({"To": "+15551234567", "Twiml": TWIML}, None, 400, 21212),
    ({"To": "+15551234567", "From": "+15005550006"}, None, 400, 21205),
    ({"To": "+15551234567", "From": "+15005550006", "Twiml": "<Response><Say>"}, None, 400, 12100),
    ({"To": "+15551234567", "From": "+15005550006", "Twiml": "<Play>x</Play>"}, None, 400, 12100),
    (
        {
            "To": "+15551234567",
            "From": "+15005550006",
            "Twiml": '<!DOCTYPE r [<!ENTITY a "aaaa">]><Response><Say>&a;</Say></Response>',
        },
        None,
        400,
        12100,
    ),
]


def test_the_sink_refuses_like_twilio(client: Any) -> None:
    for form, authorization, status, code in REFUSALS:
        response = post_call(client, form, authorization)
        assert response.status_code == status, (form, authorization)
        assert response.json["code"] == code and response.json["status"] == status
        assert response.json["more_info"] == f"https://www.twilio.com/docs/errors/{code}"
        assert response.json["success"] is False and response.json["error"]["code"] == f"TWILIO_{code}"
    assert get_outbox(client, "?channel=voice").json["data"]["items"] == []


def test_the_outbox_filters_sms_and_calls_by_phone_and_incident(client: Any) -> None:
    from chalicelib import aws

    sns = aws.client("sns")
    sns.publish(PhoneNumber="+15551234567", Message="[SEV1] INC-2026-0001 Down. Reply 4 to ack, 6 to resolve.")
    code = "Your Tocsin verification code is 123456. It expires in 10 minutes."
    sns.publish(PhoneNumber="+15557654321", Message=code)
    post_call(client, {"To": "+15551234567", "From": "+15005550006", "Twiml": TWIML})

    sms = get_outbox(client, "?channel=sms").json["data"]["items"]
    assert [(i["to"], i["incident_number"], i["sent_at"]) for i in sms] == [
        ("+15557654321", None, None),
        ("+15551234567", "INC-2026-0001", None),
    ]
    assert sms[0]["text"] == code
    for query in ("?to=%2B15551234567", "?to=+15551234567", "?to=15551234567"):
        assert sorted(i["channel"] for i in get_outbox(client, query).json["data"]["items"]) == ["sms", "voice"], query
    assert [i["channel"] for i in get_outbox(client, "?incident_number=INC-2026-0009").json["data"]["items"]] == [
        "voice"
    ]
    everything = get_outbox(client).json["data"]["items"]
    assert [i["channel"] for i in everything] == ["voice", "sms", "sms"]  # SMS have no time: last


def test_the_sink_is_404_outside_the_local_stage(client: Any) -> None:
    from chalicelib.settings import get_settings

    reconfigure(TOCSIN_STAGE="dev")
    assert not get_settings().is_local  # cached now: the test client's stage variables do not change it
    response = post_call(client, {"To": "+15551234567", "From": "+15005550006", "Twiml": TWIML})
    assert response.status_code == 404 and response.json["error"]["code"] == "NOT_FOUND"


def test_the_sink_is_documented_as_local_only(client: Any) -> None:
    document = json.loads(client.http.get("/api/v1/openapi.json").body)
    operation = document["paths"]["/local/voice/2010-04-01/Accounts/{account_sid}/Calls.json"]["post"]
    assert operation["security"] == [] and "Local stage only" in operation["summary"]
    assert {"201", "400", "401", "404"} <= set(operation["responses"])
    items = document["components"]["schemas"]
    outbox_item = next(schema for name, schema in items.items() if name.startswith("LocalOutboxItemV1"))
    assert set(outbox_item["properties"]["channel"]["enum"]) == {
        "email",
        "slack",
        "sms",
        "voice",
        "webhook",
        *("teams", "mattermost", "ntfy", "discord", "google_chat", "pushover"),  # the chat and push sink's
    }


# ---------------------------------------------------------------- on the local HTTP server


@pytest.fixture
def served(aws_env: None) -> Iterator[str]:
    """The app on a real loopback server with the local defaults: calls go to its own sink."""
    from app import app
    from chalicelib.local import routes as local_routes
    from chalicelib.local.emulator import free_port
    from chalicelib.local.server import start_server

    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    reconfigure(PUBLIC_BASE_URL=base_url)
    server, _ = start_server(app, "127.0.0.1", port)
    yield base_url
    server.server.shutdown()
    server.server.server_close()
    local_routes.unmount(app)


def test_sms_and_voice_pages_on_the_local_stack_show_up_in_the_outbox(served: str, org: Org) -> None:
    from chalicelib.incident import service as incidents
    from chalicelib.local import outbox
    from chalicelib.notification import service
    from chalicelib.settings import get_settings

    assert get_settings().voice_api_url() == f"{served}/local/voice"
    svc = make.service(org, "Checkout")
    incident = incidents.create_incident(
        organization_id=org.organization_id,
        request=incidents.NewIncident(title="Pay <down> & out", service_keys=[svc.service_key], severity="SEV1"),
        now=NOW,
        actor="tester",
        settings=get_settings(),
    )
    number = incident.incident_number
    ada = Recipient("usr_ada", "Ada", "ada@example.com", None, "+15551230001")
    results = service.notify(
        organization_id=org.organization_id,
        incident=incident,
        recipient=ada,
        channels=["sms", "voice"],
        message=None,
        now=NOW,
        actor="escalation",
        settings=get_settings(),
    )
    assert [(r.channel, r.sent, r.error_code) for r in results] == [("sms", True, None), ("voice", True, None)]
    failing = Recipient("usr_fay", "Fay", "fay@example.com", None, "+15005550001")
    [refused] = service.notify(
        organization_id=org.organization_id,
        incident=incident,
        recipient=failing,
        channels=["voice"],
        message=None,
        now=NOW,
        actor="escalation",
        settings=get_settings(),
    )
    assert (refused.sent, refused.provider_failure, refused.error_code) == (False, True, "VOICE_21211")

    items = {item.channel: item for item in outbox.list_outbox(incident_number=number)}
    assert set(items) == {"sms", "voice"}
    console = f"{served}/app/incidents/{number}"
    assert items["sms"].text == f"[SEV1] {number} Checkout: Pay <down> & out.\n{console}\nReply 4 to ack, 6 to resolve."
    assert items["voice"].to == "+15551230001"
    assert "Pay <down> & out" in items["voice"].text and "Press 4 to acknowledge" in items["voice"].text
    assert items["voice"].voice is not None and f"{served}/integrations/voice/callback" in items["voice"].voice["twiml"]


def test_a_page_links_to_the_console_never_to_the_api(served: str, org: Org) -> None:
    """Email and Slack of the spec's page operation, through the local stack: the console link."""
    from chalicelib.directory import users
    from chalicelib.incident import service as incidents
    from chalicelib.local import outbox
    from chalicelib.notification import email_ses, service, slack

    svc = make.service(org, "Checkout")
    user = users.create_user(
        organization_id=org.organization_id, name="Ana", email="ana@example.com", slack_user_id="U0ANA", now=NOW
    )
    incident = incidents.create_incident(
        organization_id=org.organization_id,
        request=incidents.NewIncident(title="Down", service_keys=[svc.service_key], severity="SEV2"),
        now=NOW,
        actor="tester",
        settings=get_settings(),
    )
    number = incident.incident_number
    console = f"{served}/app/incidents/{number}"
    note = service.build_notification(incident, "look", NOW, service_name="Checkout", settings=get_settings())
    assert note.url == console
    rendered = email_ses.render(note, Recipient(user.user_id, "Ana", "ana@example.com", None), settings=get_settings())
    assert console in rendered.html and "/api/v1/" not in rendered.html + rendered.text
    assert "/api/v1/" not in json.dumps(slack.render(note, Recipient(user.user_id, "Ana", None, "U0ANA")))

    service.notify(
        organization_id=org.organization_id,
        incident=incident,
        recipient=Recipient(user.user_id, "Ana", "ana@example.com", "U0ANA"),
        channels=["email", "slack"],
        message="look",
        now=NOW,
        actor="t",
        settings=get_settings(),
    )
    items = {item.channel: item for item in outbox.list_outbox(incident_number=number)}
    assert f"Open the incident ({console})" in items["email"].text and "/api/v1/" not in items["email"].text
    blocks = json.dumps(items["slack"].blocks)
    assert console in blocks and "/api/v1/" not in blocks
    assert '"*Service*\\nCheckout"' in blocks and '"*Assignee*\\nUnassigned"' in blocks
