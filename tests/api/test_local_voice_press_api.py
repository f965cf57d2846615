"""POST /local/voice/calls/{call_sid}/press: a key pressed on a call the local voice sink received
is posted to the call's callback signed as Twilio signs it, and the app acts for the person called."""

from __future__ import annotations

import json
import urllib.parse
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.notification import voice, voice_link
from chalicelib.notification.channels import Notification
from chalicelib.settings import get_settings
from tests.api.test_local_voice_sink_api import SID, basic
from tests.conftest import NOW, Org, reconfigure
from tests.kit import factories as make

pytestmark = pytest.mark.usefixtures("local_routes")

SINK = f"/local/voice/2010-04-01/Accounts/{SID}/Calls.json"


def _page(client: Any, org: Org) -> tuple[str, str]:
    """A responder, an incident and a page call to them recorded by the sink: (call sid, incident number)."""
    from chalicelib.directory import users
    from chalicelib.incident import service

    grace = users.create_user(
        organization_id=org.organization_id, name="Grace", email="grace@acme.test", now=NOW, role="responder"
    )
    number = service.create_incident(
        organization_id=org.organization_id,
        request=service.NewIncident(
            title="Checkout down",
            service_keys=[make.service(org, "Shop").service_key],
            severity="SEV1",
        ),
        now=NOW,
        actor="seed",
        settings=get_settings(),
    ).incident_number
    note = Notification(number, "Checkout down", "SEV1", "high", None, "http://x", organization_id=org.organization_id)
    url = voice.callback_url(
        organization_id=org.organization_id,
        incident_number=number,
        user_id=grace.user_id,
        now=NOW,
        settings=get_settings(),
    )
    form = {"To": "+15551234567", "From": "+15005550006", "Twiml": voice.page_twiml(note, url)}
    answer = client.http.post(
        SINK,
        headers={"Content-Type": "application/x-www-form-urlencoded", "Authorization": basic(SID)},
        body=urllib.parse.urlencode(form),
    )
    assert answer.status_code == 201, answer.body
    return json.loads(answer.body)["sid"], number


def press(client: Any, call_sid: str, body: Any) -> Any:
    raw = body if isinstance(body, str) else json.dumps(body)
    response = client.http.post(
        f"/local/voice/calls/{call_sid}/press", headers={"Content-Type": "application/json"}, body=raw
    )
    response.json = json.loads(response.body)
    return response


def _status(org: Org, number: str) -> str:
    from chalicelib.incident import repository

    return repository.get_incident(org.organization_id, number).status


def test_pressing_4_acknowledges_as_the_person_called(client: Any, org: Org) -> None:
    with clock.frozen(NOW):
        call_sid, number = _page(client, org)
        response = press(client, call_sid, {"digits": "4"})
    assert response.status_code == 200, response.body
    answer = response.json
    assert answer["call_sid"] == call_sid and answer["digits"] == "4"
    assert answer["callback_url"].split("?")[0].endswith(voice_link.CALLBACK_PATH)
    assert f"{number} acknowledged by grace@acme.test." in answer["said"]
    assert answer["twiml"].startswith("<Response>")
    assert _status(org, number) == "investigating"


def test_another_key_asks_again(client: Any, org: Org) -> None:
    with clock.frozen(NOW):
        call_sid, number = _page(client, org)
        answer = press(client, call_sid, {"digits": "7"}).json
    assert "Key 7 does nothing." in answer["said"] and "<Gather" in answer["twiml"]
    assert _status(org, number) == "new"


def test_an_expired_call_is_refused_like_twilios_would_be(client: Any, org: Org) -> None:
    with clock.frozen(NOW):
        call_sid, number = _page(client, org)
    with clock.frozen(NOW + voice_link.CALLBACK_LIFETIME + timedelta(minutes=1)):
        response = press(client, call_sid, {"digits": "4"})
    assert response.status_code == 401 and response.json["error"]["code"] == "INVALID_SIGNATURE"
    assert _status(org, number) == "new"


@pytest.mark.parametrize("body", [{"digits": ""}, {"digits": "44444"}, {"digits": "a"}, {"keys": "4"}, "not json"])
def test_a_bad_body_is_400(client: Any, org: Org, body: Any) -> None:
    with clock.frozen(NOW):
        call_sid, _ = _page(client, org)
        response = press(client, call_sid, body)
    assert response.status_code == 400 and response.json["error"]["code"] == "VALIDATION_ERROR"


def test_an_unknown_call_or_one_without_a_key_is_404(client: Any, org: Org) -> None:
    assert press(client, "CA" + "0" * 32, {"digits": "4"}).status_code == 404
    spoken_only = client.http.post(
        SINK,
        headers={"Content-Type": "application/x-www-form-urlencoded", "Authorization": basic(SID)},
        body=urllib.parse.urlencode({"To": "+15551234567", "From": "+15005550006", "Twiml": voice.say_twiml("Hi")}),
    )
    assert press(client, json.loads(spoken_only.body)["sid"], {"digits": "4"}).status_code == 404


def test_the_press_is_404_outside_the_local_stage(client: Any) -> None:
    reconfigure(TOCSIN_STAGE="dev")
    assert press(client, "CA" + "0" * 32, {"digits": "4"}).status_code == 404
