"""API keys and integrations in the console: every role's page, the secrets shown once, the API's
permissions (a forged POST is 403 with nothing changed), and bad input on the page."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.apikey import service as apikeys
from chalicelib.integration import admin
from chalicelib.settings import get_settings
from tests.conftest import Org
from tests.console.conftest import CONFIRMED, ROLES, ConsoleClient, Person, action_forms
from tests.kit.console import problem_named

MANAGERS = ("owner", "admin")
OTHERS = ("responder", "viewer")


def api(client: Any, org: Org, method: str, path: str, key: str | None = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {key or org.owner_key}"}
    answer = client.http.request(method, path, headers=headers, body=b"")
    return answer.status_code, json.loads(answer.body)


def key_names(org: Org) -> list[str]:
    return sorted(k.name for k in apikeys.list_api_keys(organization_id=org.organization_id))


def an_integration(org: Org) -> admin.IssuedIntegration:
    return admin.create_integration(
        organization_id=org.organization_id,
        integration_type="custom",
        name="Grafana",
        now=clock.now(),
        settings=get_settings(),
    )


# --- API keys --------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_the_api_keys_page_renders_for_every_role(
    role: str, signed_in: Callable[[str], ConsoleClient], org: Org
) -> None:
    page = signed_in(role).get("/app/api-keys")
    assert page.status == 200
    assert len(page.dom().find_all("h1")) == 1
    if role in MANAGERS:
        assert "owner" in page.text() and "readonly" in page.text()  # the org fixture's two keys
        assert "/app/api-keys" in action_forms(page)
        assert sum(1 for f in action_forms(page) if f.endswith("/revoke")) == 2
    else:
        assert action_forms(page) == []
        assert "Only owners and admins" in page.text()
        assert "readonly" not in page.text()


def test_create_shows_the_key_once_and_it_works(
    signed_in: Callable[[str], ConsoleClient], org: Org, client: Any, people: dict[str, Person]
) -> None:
    browser = signed_in("admin")
    browser.get("/app/api-keys")
    created = browser.post(
        "/app/api-keys",
        [("name", "Grafana"), ("kind", "personal"), ("scopes", "incidents:read"), ("scopes", "oncall:read")],
    )
    assert created.status == 200
    assert created.headers.get("cache-control") == "no-store"
    plaintext = created.dom().find(id="full-key").text()
    status, verified = api(client, org, "GET", "/api/v1/auth/verify", key=plaintext)
    assert status == 200 and verified["data"]["scopes"] == ["incidents:read", "oncall:read"]
    (made,) = [k for k in apikeys.list_api_keys(organization_id=org.organization_id) if k.name == "Grafana"]
    assert (made.kind, made.user_id) == ("personal", people["admin"].user_id)
    listing = browser.get("/app/api-keys")
    assert "Grafana" in listing.text() and plaintext not in listing.body
    assert made.display_prefix in listing.text()


@pytest.mark.parametrize(
    ("fields", "status", "message"),
    [
        ([("name", ""), ("kind", "service_account"), ("scopes", "incidents:read")], 400, ("name", "Name")),
        ([("name", "No scopes"), ("kind", "service_account")], 400, ("scopes", "Scopes")),
        ([("name", "Odd"), ("kind", "service_account"), ("scopes", "root")], 400, ("scopes", "Scopes")),
        ([("name", "Odd"), ("kind", "robot"), ("scopes", "incidents:read")], 400, ("kind", "Kind")),
    ],
)
def test_bad_key_input_is_shown_on_the_page_and_nothing_is_made(
    fields: list[tuple[str, str]],
    status: int,
    message: tuple[str, str],
    signed_in: Callable[[str], ConsoleClient],
    org: Org,
) -> None:
    browser = signed_in("owner")
    browser.get("/app/api-keys")
    before = key_names(org)
    answer = browser.post("/app/api-keys", fields)
    assert answer.status == status
    assert answer.dom().find("h1").text() == "API keys"
    assert answer.dom().find(cls="problem").text()
    assert len(problem_named(answer, *message)) == 1  # once: at its input, or at the top by its label
    assert key_names(org) == before


def test_revoke_from_the_page_and_the_key_stops_working(
    signed_in: Callable[[str], ConsoleClient], org: Org, client: Any
) -> None:
    browser = signed_in("owner")
    browser.get("/app/api-keys")
    (readonly,) = [k for k in apikeys.list_api_keys(organization_id=org.organization_id) if k.name == "readonly"]
    revoked = browser.post(f"/app/api-keys/{readonly.key_id}/revoke", CONFIRMED)
    assert revoked.status == 303 and revoked.location == "/app/api-keys?done=api_key_revoked"
    assert api(client, org, "GET", "/api/v1/auth/verify", key=org.readonly_key)[0] == 401
    page = browser.follow(revoked)
    assert "API key revoked" in page.text()
    assert f"/app/api-keys/{readonly.key_id}/revoke" not in action_forms(page)
    missing = browser.post("/app/api-keys/nope/revoke", CONFIRMED)
    assert missing.status == 404 and "API key not found." in missing.text()


@pytest.mark.parametrize("role", OTHERS)
def test_a_forged_key_post_from_a_lower_role_is_refused(
    role: str, signed_in: Callable[[str], ConsoleClient], org: Org, client: Any
) -> None:
    browser = signed_in(role)
    browser.get("/app/api-keys")
    (readonly,) = [k for k in apikeys.list_api_keys(organization_id=org.organization_id) if k.name == "readonly"]
    before = key_names(org)
    assert browser.post("/app/api-keys", {"name": "sneaky", "kind": "service_account", "scopes": "admin"}).status == 403
    assert browser.post(f"/app/api-keys/{readonly.key_id}/revoke").status == 403
    assert key_names(org) == before
    assert api(client, org, "GET", "/api/v1/auth/verify", key=org.readonly_key)[0] == 200


@pytest.mark.parametrize("csrf", ["-", "bad"])
def test_key_forms_refuse_a_missing_or_wrong_csrf_token(
    csrf: str, signed_in: Callable[[str], ConsoleClient], org: Org
) -> None:
    browser = signed_in("owner")
    browser.get("/app/api-keys")
    before = key_names(org)
    answer = browser.post("/app/api-keys", {"name": "x", "kind": "service_account", "scopes": "admin"}, csrf=csrf)
    assert answer.status == 403
    assert key_names(org) == before


# --- integrations ----------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_the_integrations_page_renders_for_every_role(
    role: str, signed_in: Callable[[str], ConsoleClient], org: Org
) -> None:
    issued = an_integration(org)
    page = signed_in(role).get("/app/integrations")
    assert page.status == 200
    assert "Grafana" in page.text() and issued.integration.key_hint in page.text()
    assert issued.routing_key not in page.body
    if role in MANAGERS:
        assert set(action_forms(page)) == {
            "/app/integrations",
            f"/app/integrations/{issued.integration.integration_id}/regenerate",
            f"/app/integrations/{issued.integration.integration_id}/revoke",
        }
    else:
        assert action_forms(page) == []


def test_create_shows_the_url_once_and_it_takes_alerts(
    signed_in: Callable[[str], ConsoleClient], org: Org, client: Any
) -> None:
    browser = signed_in("admin")
    page = browser.get("/app/integrations")
    assert "No integrations yet." in page.text()
    created = browser.post(
        "/app/integrations", {"type": "custom", "name": "Checkout alerts", "signing": "on", "ip_allowlist": ""}
    )
    assert created.status == 200 and created.headers.get("cache-control") == "no-store"
    dom = created.dom()
    url = dom.find(id="webhook-url").text()
    routing_key = dom.find(id="routing-key").text()
    assert routing_key in url and dom.find(id="signing-secret").text()
    _, listed = api(client, org, "GET", "/api/v1/integrations")
    (item,) = listed["data"]["items"]
    assert (item["name"], item["type"], item["signing"], item["state"]) == ("Checkout alerts", "custom", True, "active")
    assert routing_key not in browser.get("/app/integrations").body


def test_regenerate_and_revoke(signed_in: Callable[[str], ConsoleClient], org: Org, client: Any) -> None:
    issued = an_integration(org)
    integration_id = issued.integration.integration_id
    browser = signed_in("owner")
    browser.get("/app/integrations")
    fresh = browser.post(f"/app/integrations/{integration_id}/regenerate", CONFIRMED)
    assert fresh.status == 200
    new_key = fresh.dom().find(id="routing-key").text()
    assert new_key != issued.routing_key
    status, document = api(client, org, "GET", f"/api/v1/integrations/{integration_id}")
    assert (status, document["data"]["routing_key_hint"]) == (200, new_key[:6])
    browser.get("/app/integrations")
    revoked = browser.post(f"/app/integrations/{integration_id}/revoke", CONFIRMED)
    assert revoked.status == 303 and revoked.location == "/app/integrations?done=integration_revoked"
    status, document = api(client, org, "GET", f"/api/v1/integrations/{integration_id}")
    assert (status, document["data"]["state"]) == (200, "revoked")
    browser.get("/app/integrations")
    again = browser.post(f"/app/integrations/{integration_id}/regenerate", CONFIRMED)
    assert again.status == 409 and "revoked integration cannot get a new URL" in again.text()
    missing = browser.post("/app/integrations/nope/revoke", CONFIRMED)
    assert missing.status == 404


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"type": "custom", "name": ""}, ("name", "Name")),
        ({"type": "carrier-pigeon", "name": "Coo"}, ("type", "Type")),
        ({"type": "sentry", "name": "S", "signing": "on"}, ("signing", "Require a signature")),
        ({"type": "custom", "name": "C", "client_secret": "abcdefghij"}, ("client_secret", "Sentry client secret")),
        ({"type": "custom", "name": "C", "default_service": "svc_nope"}, ("default_service", "Default service")),
        (
            {"type": "custom", "name": "C", "ip_allowlist": "10.0.0.0/8\nnot-an-ip"},
            ("ip_allowlist", "Allowed source addresses (optional), item 2"),
        ),
    ],
)
def test_bad_integration_input_is_shown_on_the_page(
    fields: dict[str, str], field: tuple[str, str], signed_in: Callable[[str], ConsoleClient], org: Org
) -> None:
    browser = signed_in("owner")
    browser.get("/app/integrations")
    answer = browser.post("/app/integrations", fields)
    assert answer.status == 400, answer.text()
    assert answer.dom().find(cls="problem").text()
    name, label = field
    # Once, by the form's words: at its input, or at the top by its label (never "ip_allowlist.1").
    assert len(problem_named(answer, name, label)) == 1
    assert admin.list_integrations(organization_id=org.organization_id) == []


@pytest.mark.parametrize("role", OTHERS)
def test_a_forged_integration_post_from_a_lower_role_is_refused(
    role: str, signed_in: Callable[[str], ConsoleClient], org: Org
) -> None:
    issued = an_integration(org)
    integration_id = issued.integration.integration_id
    browser = signed_in(role)
    browser.get("/app/integrations")
    assert browser.post("/app/integrations", {"type": "custom", "name": "sneaky"}).status == 403
    assert browser.post(f"/app/integrations/{integration_id}/regenerate").status == 403
    assert browser.post(f"/app/integrations/{integration_id}/revoke").status == 403
    (only,) = admin.list_integrations(organization_id=org.organization_id)
    assert (only.state, only.key_hint) == ("active", issued.integration.key_hint)


def test_integration_forms_refuse_a_missing_or_wrong_csrf_token(
    signed_in: Callable[[str], ConsoleClient], org: Org
) -> None:
    issued = an_integration(org)
    browser = signed_in("owner")
    browser.get("/app/integrations")
    path = f"/app/integrations/{issued.integration.integration_id}/revoke"
    assert browser.post(path, csrf="-").status == 403
    assert browser.post(path, csrf="0" * 43).status == 403
    (only,) = admin.list_integrations(organization_id=org.organization_id)
    assert only.state == "active"


def test_revoking_asks_first_and_a_stray_tap_changes_nothing(
    signed_in: Callable[[str], ConsoleClient], org: Org, client: Any
) -> None:
    from chalicelib.apikey import service as apikeys
    from chalicelib.auth.scopes import ALL_SCOPES
    from tests.conftest import NOW

    record, key = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="ci",
        kind="service_account",
        scopes=list(ALL_SCOPES),
        now=NOW,
        settings=get_settings(),
    )
    browser = signed_in("owner")
    browser.get("/app/api-keys")
    asked = browser.post(f"/app/api-keys/{record.key_id}/revoke")
    assert asked.status == 200
    assert asked.dom().find("h1").text() == "Revoke this API key?"
    form = asked.dom().find("form", action=f"/app/api-keys/{record.key_id}/revoke")
    assert form.find("input", name="confirm").attrs.get("value") == "yes"
    assert form.find("button").text() == "Revoke key"
    still = client.http.get("/api/v1/auth/verify", headers={"Authorization": f"Bearer {key}"})
    assert still.status_code == 200  # asking changed nothing
    done = browser.post(f"/app/api-keys/{record.key_id}/revoke", CONFIRMED)
    assert done.status == 303
    gone = client.http.get("/api/v1/auth/verify", headers={"Authorization": f"Bearer {key}"})
    assert gone.status_code == 401
