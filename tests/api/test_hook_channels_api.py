"""Chat and push channels through chalice.test.Client: adding a webhook-style contact method (bad
URL, private address, a secret where none is taken, the URL never answered), and acting from a
page: ntfy's `POST /integrations/page-actions/{token}` and Mattermost's
`POST /integrations/mattermost/actions`, forged, expired, replayed, of another organization or
channel, and pressed by a viewer."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.delivery import targets
from chalicelib.directory import users
from chalicelib.incident import repository
from chalicelib.notification import email_links
from chalicelib.notification.hook_links import mattermost_token
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, make_org
from tests.kit.api import call

TEAMS_URL = "https://acme.webhook.office.com/webhookb2/abc/IncomingWebhook/def/secret-tail"
MATTERMOST_PATH = "/integrations/mattermost/actions"


@pytest.fixture(autouse=True)
def public_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(targets, "default_resolve", lambda host, port: ["93.184.216.34"])


def _methods(user_id: str) -> str:
    return f"/api/v1/users/{user_id}/contact-methods"


def _person(org: Org, role: str = "responder", email: str = "ana@acme.test") -> str:
    return users.create_user(organization_id=org.organization_id, name=None, email=email, role=role, now=NOW).user_id


# ---------------------------------------------------------------------------- contact methods


def test_a_teams_method_is_created_unverified_and_its_url_never_answered(client: Any, org: Org) -> None:
    ana = _person(org)
    created = call(client, "POST", _methods(ana), org.owner_key, {"type": "teams", "address": TEAMS_URL})
    assert created.status == 201, created.text
    assert created.data["address"] == "https://acme.webhook.office.com/\u2026tail"
    assert (created.data["verified"], created.data["label"]) == (False, "Microsoft Teams")
    listed = call(client, "GET", _methods(ana), org.owner_key)
    rules = call(client, "GET", f"/api/v1/users/{ana}/notification-rules", org.owner_key)
    for reply in (created, listed, rules):
        assert "secret-tail" not in reply.text and "webhookb2" not in reply.text
    again = call(client, "POST", _methods(ana), org.owner_key, {"type": "teams", "address": TEAMS_URL})
    assert again.status == 409 and "secret-tail" not in again.text


@pytest.mark.parametrize(
    ("body", "field_name"),
    [
        ({"type": "teams", "address": "http://acme.webhook.office.com/x"}, "address"),
        ({"type": "discord", "address": "not a url"}, "address"),
        ({"type": "ntfy", "address": "https://ntfy.sh/has space"}, "address"),
        ({"type": "google_chat", "address": "https://chat.googleapis.com/v1/spaces/X", "secret": "tok"}, "secret"),
        ({"type": "sms", "address": "+15551234567", "secret": "tok"}, "secret"),
        ({"type": "ntfy", "address": "https://ntfy.sh/ok", "secret": "has space"}, "secret"),
        ({"type": "pigeon", "address": "https://ntfy.sh/ok"}, "type"),
    ],
)
def test_bad_destinations_are_400_naming_the_field(
    client: Any, org: Org, body: dict[str, Any], field_name: str
) -> None:
    reply = call(client, "POST", _methods(_person(org)), org.owner_key, body)
    assert reply.status == 400, reply.text
    assert reply.error_code == "VALIDATION_ERROR" and field_name in reply.fields


def test_a_private_address_is_400(client: Any, org: Org, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(targets, "default_resolve", lambda host, port: ["169.254.169.254"])
    reply = call(
        client,
        "POST",
        _methods(_person(org)),
        org.owner_key,
        {"type": "mattermost", "address": "https://mm.acme.test/hooks/x"},
    )
    assert reply.status == 400 and reply.fields == ["address"] and "not a public address" in reply.text


def test_an_unverified_method_is_listed_in_the_rules_as_waiting(client: Any, org: Org) -> None:
    ana = _person(org)
    created = call(client, "POST", _methods(ana), org.owner_key, {"type": "ntfy", "address": "https://ntfy.sh/ana-x"})
    step = {"contact_method_id": created.data["id"], "delay_minutes": 0}
    put = call(client, "PUT", f"/api/v1/users/{ana}/notification-rules", org.owner_key, {"high": [step], "low": []})
    assert put.status == 200, put.text
    assert [(s["type"], s["verified"]) for s in put.data["high"]] == [("ntfy", False)]
    wrong = call(client, "POST", f"{_methods(ana)}/{created.data['id']}/verify", org.owner_key, {"code": "000000"})
    assert wrong.status == 409 and wrong.json["error"]["details"]["reason"] == "not_sent"
    sent = call(client, "POST", f"{_methods(ana)}/{created.data['id']}/send-verification", org.owner_key)
    assert sent.status == 202 and sent.data["type"] == "ntfy"


# ---------------------------------------------------------------------------- acting from a page


@pytest.fixture
def incident(org: Org) -> str:
    from chalicelib.catalog import service as services
    from chalicelib.incident import service

    svc = services.create_service(organization_id=org.organization_id, name="Checkout", now=NOW)
    created = service.create_incident(
        organization_id=org.organization_id,
        request=service.NewIncident(title="Checkout down", service_keys=[svc.service_key], severity="SEV1"),
        now=NOW,
        actor="seed",
        settings=get_settings(),
    )
    return created.incident_number


def _token(org: Org, user_id: str, number: str, action: str, via: str, *, at: Any = NOW) -> str:
    link = email_links.new_link(
        organization_id=org.organization_id,
        user_id=user_id,
        incident_number=number,
        action=action,
        now=at,
        via=via,  # type: ignore[arg-type]
    )
    return email_links.sign(link, settings=get_settings())


def _tap(client: Any, token: str) -> Any:
    return call(client, "POST", f"/integrations/page-actions/{token}")


def _press(client: Any, context: Any) -> Any:
    return call(client, "POST", MATTERMOST_PATH, body={"user_id": "mm1", "post_id": "p1", "context": context})


def test_an_ntfy_tap_acts_once_then_409(client: Any, org: Org, incident: str) -> None:
    ana = _person(org)
    token = _token(org, ana, incident, "acknowledge", "ntfy")
    with clock.frozen(NOW):
        first = _tap(client, token)
        assert first.status == 200, first.text
        assert json.loads(first.body) == {
            "done": True,
            "message": f"{incident} acknowledged by ana@acme.test.",
            "incident_number": incident,
        }
        replay = _tap(client, token)
    assert replay.status == 409 and replay.json["error"]["code"] == "CONFLICT"
    entries = repository.get_with_timeline(org.organization_id, incident).timeline
    assert [str(e.title) for e in entries if str(e.title).startswith("Acknowledged")] == [
        "Acknowledged by ana@acme.test via ntfy"
    ]


@pytest.mark.parametrize("how", ["forged", "mangled", "email link", "teams link", "expired"])
def test_refused_taps_are_401_and_change_nothing(client: Any, org: Org, incident: str, how: str) -> None:
    ana = _person(org)
    token = {
        "forged": lambda: _token(org, ana, incident, "resolve", "ntfy")[:-4] + "AAAA",
        "mangled": lambda: "c1.not-base64!.sig",
        "email link": lambda: _token(org, ana, incident, "resolve", "email"),
        "teams link": lambda: _token(org, ana, incident, "resolve", "teams"),
        "expired": lambda: _token(org, ana, incident, "resolve", "ntfy", at=NOW - timedelta(hours=25)),
    }[how]()
    with clock.frozen(NOW):
        reply = _tap(client, token)
    assert reply.status == 401, reply.text
    assert reply.json["error"]["code"] == ("SIGNATURE_EXPIRED" if how == "expired" else "INVALID_SIGNATURE")
    assert repository.get_incident(org.organization_id, incident).resolved_at is None


def test_a_viewer_tapping_is_told_they_cannot(client: Any, org: Org, incident: str) -> None:
    vera = _person(org, role="viewer", email="vera@acme.test")
    with clock.frozen(NOW):
        reply = _tap(client, _token(org, vera, incident, "acknowledge", "ntfy"))
    assert reply.status == 200 and json.loads(reply.body)["done"] is False
    assert "can view incidents but not change them" in json.loads(reply.body)["message"]
    assert repository.get_incident(org.organization_id, incident).acknowledged_at is None


def test_a_mattermost_press_updates_the_post_once(client: Any, org: Org, incident: str) -> None:
    ana = _person(org)
    context = {
        "action": "resolve",
        "token": mattermost_token(org.organization_id, settings=get_settings()),
        "link": _token(org, ana, incident, "resolve", "mattermost"),
    }
    with clock.frozen(NOW):
        first = _press(client, context)
        assert first.status == 200, first.text
        said = f"{incident} resolved by ana@acme.test."
        assert json.loads(first.body) == {"update": {"message": said}, "ephemeral_text": said}
        assert _press(client, context).status == 409
    assert repository.get_incident(org.organization_id, incident).resolved_at is not None


@pytest.mark.parametrize("how", ["another organization's token", "no token", "forged link", "ntfy link", "expired"])
def test_refused_mattermost_presses_are_401(client: Any, org: Org, incident: str, how: str) -> None:
    ana = _person(org)
    other = make_org("Other")
    good = _token(org, ana, incident, "resolve", "mattermost")
    token = mattermost_token(org.organization_id, settings=get_settings())
    context = {
        "another organization's token": {
            "token": mattermost_token(other.organization_id, settings=get_settings()),
            "link": good,
        },
        "no token": {"link": good},
        "forged link": {"token": token, "link": good[:-4] + "AAAA"},
        "ntfy link": {"token": token, "link": _token(org, ana, incident, "resolve", "ntfy")},
        "expired": {
            "token": token,
            "link": _token(org, ana, incident, "resolve", "mattermost", at=NOW - timedelta(days=2)),
        },
    }[how]
    with clock.frozen(NOW):
        reply = _press(client, context)
    assert reply.status == 401, reply.text
    assert repository.get_incident(org.organization_id, incident).resolved_at is None


def test_a_link_of_one_organization_cannot_act_in_another(client: Any, org: Org, incident: str) -> None:
    """The token names its own organization: a person of another organization signed into a link
    acts only where they are (their user id is unknown here, so nothing happens)."""
    other = make_org("Other")
    outsider = users.create_user(organization_id=other.organization_id, name=None, email="o@x.test", now=NOW).user_id
    link = email_links.new_link(
        organization_id=org.organization_id,
        user_id=outsider,
        incident_number=incident,
        action="resolve",
        now=NOW,
        via="ntfy",
    )
    with clock.frozen(NOW):
        reply = _tap(client, email_links.sign(link, settings=get_settings()))
    assert reply.status == 200 and json.loads(reply.body)["done"] is False
    assert repository.get_incident(org.organization_id, incident).resolved_at is None


@pytest.mark.parametrize(("body", "status"), [(b"not json", 400), (b"[1]", 400), (b"{}", 401), (b"x" * 20000, 413)])
def test_malformed_mattermost_posts(client: Any, org: Org, body: bytes, status: int) -> None:
    reply = call(client, "POST", MATTERMOST_PATH, body=body, headers={"Content-Type": "application/json"})
    assert reply.status == status, reply.text


def test_a_viewer_pressing_in_mattermost_is_told_only_themself(client: Any, org: Org, incident: str) -> None:
    vera = _person(org, role="viewer", email="vera@acme.test")
    context = {
        "token": mattermost_token(org.organization_id, settings=get_settings()),
        "link": _token(org, vera, incident, "acknowledge", "mattermost"),
    }
    with clock.frozen(NOW):
        reply = _press(client, context)
    assert reply.status == 200
    assert set(json.loads(reply.body)) == {"ephemeral_text"}
    assert "can view incidents but not change them" in json.loads(reply.body)["ephemeral_text"]


# ---------------------------------------------------------------------------- Pushover's callback


def _pushover_link(org: Org, user_id: str, number: str, *, at: Any = NOW, via: str = "pushover") -> str:
    from chalicelib.notification import pushover

    link = email_links.new_link(
        organization_id=org.organization_id,
        user_id=user_id,
        incident_number=number,
        action="acknowledge",
        now=at,
        via=via,
    )
    pushover.remember_receipt(link, "rcpt-1", at)
    return email_links.sign(link, settings=get_settings())


def _callback(client: Any, token: str, receipt: str = "rcpt-1") -> Any:
    form = f"receipt={receipt}&acknowledged=1&acknowledged_at=1790000000&acknowledged_by=uKey&acknowledged_by_device=p"
    return call(
        client,
        "POST",
        f"/integrations/pushover/callback/{token}",
        body=form.encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )


def test_pushover_s_acknowledgement_acknowledges_once(client: Any, org: Org, incident: str) -> None:
    token = _pushover_link(org, _person(org), incident)
    with clock.frozen(NOW):
        first = _callback(client, token)
        assert first.status == 200, first.text
        assert json.loads(first.body)["message"] == f"{incident} acknowledged by ana@acme.test."
        assert _callback(client, token).status == 409
    assert repository.get_incident(org.organization_id, incident).acknowledged_at is not None


@pytest.mark.parametrize("how", ["wrong receipt", "no receipt", "forged", "ntfy link", "expired"])
def test_refused_pushover_callbacks_are_401(client: Any, org: Org, incident: str, how: str) -> None:
    ana = _person(org)
    with clock.frozen(NOW):
        if how == "wrong receipt":
            reply = _callback(client, _pushover_link(org, ana, incident), receipt="rcpt-2")
        elif how == "no receipt":
            reply = _callback(client, _pushover_link(org, ana, incident), receipt="")
        elif how == "forged":
            reply = _callback(client, _pushover_link(org, ana, incident)[:-4] + "AAAA")
        elif how == "ntfy link":
            reply = _callback(client, _pushover_link(org, ana, incident, via="ntfy"))
        else:
            reply = _callback(client, _pushover_link(org, ana, incident, at=NOW - timedelta(hours=25)))
    assert reply.status == 401, reply.text
    assert repository.get_incident(org.organization_id, incident).acknowledged_at is None


def test_a_viewer_acknowledging_on_pushover_changes_nothing(client: Any, org: Org, incident: str) -> None:
    token = _pushover_link(org, _person(org, role="viewer", email="vera@acme.test"), incident)
    with clock.frozen(NOW):
        reply = _callback(client, token)
    assert reply.status == 200 and json.loads(reply.body)["done"] is False
    assert repository.get_incident(org.organization_id, incident).acknowledged_at is None
