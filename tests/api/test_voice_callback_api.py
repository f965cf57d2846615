"""POST /integrations/voice/callback through chalice.test.Client: Twilio's signature, Tocsin's
token in the URL, each key, an unknown key, a viewer, and that a refused callback changes nothing."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from xml.etree import ElementTree

import pytest

from chalicelib import clock
from chalicelib.notification import voice, voice_link
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, reconfigure
from tests.kit import factories as make

TOKEN = "twilio-auth-token-for-tests"
FORM = {"CallSid": "CA" + "1" * 32, "AccountSid": "AC" + "2" * 32, "From": "+15550009999", "To": "+15551234567"}


@pytest.fixture
def world(client: Any, org: Org) -> Iterator[dict[str, Any]]:
    from chalicelib.directory import users
    from chalicelib.incident import service

    reconfigure(VOICE_ACCOUNT_SID=FORM["AccountSid"], VOICE_AUTH_TOKEN=TOKEN, VOICE_FROM_NUMBER=FORM["From"])
    grace = users.create_user(
        organization_id=org.organization_id, name="Grace", email="grace@acme.test", now=NOW, role="responder"
    )
    vera = users.create_user(
        organization_id=org.organization_id, name="Vera", email="vera@acme.test", now=NOW, role="viewer"
    )
    svc = make.service(org, "Checkout")
    created = service.create_incident(
        organization_id=org.organization_id,
        request=service.NewIncident(title="Checkout down", service_keys=[svc.service_key], severity="SEV1"),
        now=NOW,
        actor="seed",
        settings=get_settings(),
    )
    with clock.frozen(NOW):
        yield {"client": client, "org": org, "grace": grace, "vera": vera, "number": created.incident_number}


def _url(world: dict[str, Any], *, user: str = "grace", number: str | None = None) -> str:
    return voice.callback_url(
        organization_id=world["org"].organization_id,
        incident_number=number or world["number"],
        user_id=world[user].user_id,
        now=NOW,
        settings=get_settings(),
    )


def press(world: dict[str, Any], url: str, digits: str | None, *, signature: str | None = None) -> Any:
    form = dict(FORM) | ({"Digits": digits} if digits is not None else {})
    if signature is None:
        signature = voice_link.twilio_signature(TOKEN, url, form.items())
    base = get_settings().public_base_url.rstrip("/")
    assert url.startswith(base)
    return world["client"].http.post(
        url[len(base) :],
        headers={"Content-Type": "application/x-www-form-urlencoded", "X-Twilio-Signature": signature},
        body=urllib.parse.urlencode(form),
    )


def said(response: Any) -> str:
    assert response.status_code == 200, response.body
    assert response.headers["Content-Type"] == "text/xml; charset=utf-8"
    root = ElementTree.fromstring(response.body)
    assert root.tag == "Response"
    return " ".join(say.text or "" for say in root.iter("Say"))


def _incident(world: dict[str, Any]) -> Any:
    from chalicelib.incident import repository

    return repository.get_with_timeline(world["org"].organization_id, world["number"])


def test_4_acknowledges_for_the_person_called_and_the_timeline_names_the_call(world: dict[str, Any]) -> None:
    text = said(press(world, _url(world), "4"))
    assert f"{world['number']} acknowledged by grace@acme.test." in text
    found = _incident(world)
    assert found.incident.status == "investigating"  # the default workflow's acknowledged status
    assert "Acknowledged by grace@acme.test via a phone call" in [entry.title for entry in found.timeline]
    # The same signed request again (a replay): answered what the first was, and nothing changes.
    assert said(press(world, _url(world), "4")) == text
    acknowledged = [entry for entry in _incident(world).timeline if entry.event_type == "acknowledged"]
    assert len(acknowledged) == 1


def test_6_resolves(world: dict[str, Any]) -> None:
    assert f"{world['number']} resolved by grace@acme.test." in said(press(world, _url(world), "6"))
    assert _incident(world).incident.status == "resolved"


def test_8_escalates_or_says_why_not(world: dict[str, Any]) -> None:
    # The service has no escalation policy: respond says there is nowhere to go, and nothing changes.
    assert "no further level to escalate to" in said(press(world, _url(world), "8"))
    assert _incident(world).incident.status == "new"


@pytest.mark.parametrize("digits", ["9", "0", "#", "", None, "44"])
def test_another_key_asks_again_and_changes_nothing(world: dict[str, Any], digits: str | None) -> None:
    response = press(world, _url(world), digits)
    text = said(response)
    assert "Press 4 to acknowledge, 6 to resolve, 8 to escalate." in text
    gather = ElementTree.fromstring(response.body).find("Gather")
    assert gather is not None and gather.get("action", "").startswith(get_settings().public_base_url.rstrip("/"))
    # The new Gather's URL is a genuine callback for the same person and incident.
    again = said(press(world, gather.get("action", ""), "4"))
    assert "acknowledged by grace@acme.test" in again


def test_a_viewer_is_told_and_nothing_changes(world: dict[str, Any]) -> None:
    assert "can view incidents but not change them" in said(press(world, _url(world, user="vera"), "4"))
    assert _incident(world).incident.status == "new"


def _refused(response: Any, world: dict[str, Any]) -> None:
    import json

    assert response.status_code == 401, response.body
    assert json.loads(response.body)["error"]["code"] == "INVALID_SIGNATURE"
    found = _incident(world)
    assert found.incident.status == "new"
    assert not any("phone call" in (entry.title or "") for entry in found.timeline)


def test_a_bad_or_missing_signature_is_refused(world: dict[str, Any]) -> None:
    _refused(press(world, _url(world), "4", signature="0/KCTR6DLpKmkAf8muzZqo1nDgQ="), world)
    _refused(press(world, _url(world), "4", signature=""), world)
    url = _url(world)
    wrong_key = voice_link.twilio_signature("another-token", url, (dict(FORM) | {"Digits": "4"}).items())
    _refused(press(world, url, "4", signature=wrong_key), world)


def test_a_signature_over_other_fields_is_refused(world: dict[str, Any]) -> None:
    url = _url(world)
    signed_for_9 = voice_link.twilio_signature(TOKEN, url, (dict(FORM) | {"Digits": "9"}).items())
    _refused(press(world, url, "4", signature=signed_for_9), world)


def test_a_url_pointed_at_another_person_or_incident_is_refused_even_when_twilio_signed(
    world: dict[str, Any],
) -> None:
    # Someone holding the auth token can sign any URL; Tocsin's token still binds the person and incident.
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(_url(world, user="vera")).query))
    for change in ({"user_id": world["grace"].user_id}, {"incident_number": "INC-2026-9999"}):
        forged = voice_link.requested_url(get_settings().public_base_url, query | change)
        _refused(press(world, forged, "4"), world)


def test_an_expired_callback_is_refused(world: dict[str, Any]) -> None:
    url = _url(world)
    with clock.frozen(NOW + voice_link.CALLBACK_LIFETIME + timedelta(seconds=1)):
        _refused(press(world, url, "4"), world)


def test_without_a_voice_provider_no_callback_verifies(world: dict[str, Any]) -> None:
    url = _url(world)
    reconfigure(VOICE_ACCOUNT_SID="", VOICE_AUTH_TOKEN="", VOICE_FROM_NUMBER="")
    _refused(press(world, url, "4"), world)


def test_a_key_press_replayed_four_times_escalates_once(world: dict[str, Any]) -> None:
    from chalicelib.catalog import service as services
    from chalicelib.escalation import service as policies
    from chalicelib.escalation.steps import Level, Target
    from chalicelib.incident import repository, service
    from chalicelib.paging import escalation_runs

    organization_id = world["org"].organization_id
    level = Level((Target("user", world["grace"].user_id),), 30)
    policy = policies.create_policy(organization_id=organization_id, name="Three", levels=[level] * 3, now=NOW)
    svc = services.create_service(
        organization_id=organization_id, name="Payments", now=NOW, escalation_policy_id=policy.policy.policy_id
    )
    number = service.create_incident(
        organization_id=organization_id,
        request=service.NewIncident(title="Payments down", service_keys=[svc.service_key], severity="SEV1"),
        now=NOW,
        actor="seed",
        settings=get_settings(),
    ).incident_number
    escalation_runs.begin(organization_id=organization_id, incident_number=number, now=NOW, settings=get_settings())
    url = _url(world, number=number)
    answers = [said(press(world, url, "8")) for _ in range(4)]
    assert answers == [f"{number} escalated by grace@acme.test. Goodbye."] * 4
    found = repository.get_with_timeline(organization_id, number)
    assert sum(1 for entry in found.timeline if (entry.title or "").startswith("Escalated by hand")) == 1
    assert found.incident.escalation["level_index"] == 1  # level 2, not level 3 and beyond
