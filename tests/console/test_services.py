"""The services pages: every role reads them; owners and admins create and edit through the
catalog's own functions, checked through the API."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import Org
from tests.console.conftest import ROLES, ConsoleClient, Person, action_forms
from tests.console.routing_world import World, build_world


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return build_world(org, people)


def _api(org: Org, client: Any, path: str) -> Any:
    answer = client.http.get(path, headers={"Authorization": f"Bearer {org.owner_key}"})
    return answer.status_code, json.loads(answer.body)


def _hours(zone: str, start: str, end: str, days: tuple[str, ...] = ("mon",)) -> dict[str, Any]:
    return {"hours_zone": zone, "hours_days": list(days), "hours_start": start, "hours_end": end}


def _service_form(**changes: Any) -> list[tuple[str, str]]:
    fields: dict[str, Any] = {
        "name": "Checkout",
        "description": "The basket and the till",
        "team_id": "",
        "escalation_policy_id": "",
        "default_severity": "SEV3",
        "urgency_type": "high",
        "hours_zone": "",
        "hours_start": "",
        "hours_end": "",
        "hours_days": [],
    }
    fields.update(changes)
    items: list[tuple[str, str]] = []
    for name, value in fields.items():
        items.extend((name, v) for v in value) if isinstance(value, list) else items.append((name, value))
    return items


@pytest.mark.parametrize("role", ROLES)
def test_every_services_page_renders_for_every_role(
    role: str, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in(role)
    for path in ("/app/services", "/app/services/new", f"/app/services/{world.service_key}"):
        answer = browser.get(path)
        assert answer.status == 200, (path, answer.body[:500])
        assert len(answer.dom().find_all("h1")) == 1
        forms = action_forms(answer)
        if role in ("viewer", "responder"):
            assert forms == [], (path, forms)
        elif path != "/app/services":
            assert forms, path
    listing = browser.get("/app/services").dom()
    assert ("New service" in listing.text()) is (role in ("owner", "admin"))


def test_the_list_shows_policy_severity_and_urgency(world: World, signed_in: Callable[[str], ConsoleClient]) -> None:
    rows = signed_in("viewer").get("/app/services").dom().find("tbody").find_all("tr")
    search, payments = rows
    assert "None: nobody is paged" in search.text()
    assert payments.find("td", **{"data-label": "Escalation policy"}).text() == "Payments escalation"
    assert payments.find("td", **{"data-label": "Default severity"}).text() == "SEV2"
    assert "By severity" in payments.find("td", **{"data-label": "Urgency"}).text()


def test_a_service_is_found_by_its_ser_id_and_an_unknown_one_is_a_404(
    org: Org, client: Any, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    _, made = _api(org, client, f"/api/v1/services/{world.service_key}")
    browser = signed_in("viewer")
    assert "Payments API" in browser.get(f"/app/services/{made['data']['service_id']}").text()
    assert browser.get("/app/services/svc_nope000000").status == 404


def test_an_admin_creates_a_service_with_support_hours(
    org: Org, client: Any, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("admin")
    browser.get("/app/services/new")
    answer = browser.post(
        "/app/services",
        _service_form(
            escalation_policy_id=world.policy_id,
            hours_zone="Europe/Berlin",
            hours_days=["mon", "tue"],
            hours_start="09:00",
            hours_end="17:00",
        ),
    )
    assert answer.status == 303, answer.body[:800]
    key = answer.location.split("/app/services/")[1].split("?")[0]
    assert "Service created." in browser.follow(answer).text()
    status, made = _api(org, client, f"/api/v1/services/{key}")
    assert status == 200
    data = made["data"]
    assert (data["name"], data["description"], data["default_severity"]) == (
        "Checkout",
        "The basket and the till",
        "SEV3",
    )
    assert data["escalation_policy_id"] == world.policy_id
    assert data["urgency_rule"] == {
        "type": "high",
        "support_hours": {"time_zone": "Europe/Berlin", "days": ["mon", "tue"], "start": "09:00", "end": "17:00"},
    }


@pytest.mark.parametrize(
    ("changes", "status", "field", "message"),
    [
        ({"name": ""}, 400, "name", "at least 1 character"),
        ({"name": "payments api"}, 409, None, "already"),
        (
            {"hours_zone": "Mars/Olympus", "hours_days": ["mon"], "hours_start": "09:00", "hours_end": "17:00"},
            400,
            "hours_zone",
            "",
        ),
        (
            {"hours_zone": "Europe/Berlin", "hours_days": ["mon"], "hours_start": "09:00", "hours_end": "09:00"},
            400,
            None,
            "end",
        ),
        ({"hours_zone": "Europe/Berlin", "hours_start": "09:00", "hours_end": "17:00"}, 400, "hours_days", ""),
        # Named at its select (labelled "Escalation policy"), never by the API's path.
        ({"escalation_policy_id": "pol_nope"}, 400, "escalation_policy_id", "no such escalation policy"),
        ({"default_severity": "SEV9"}, 400, "default_severity", ""),
    ],
)
def test_a_bad_new_service_reshows_the_form_and_creates_nothing(
    changes: dict[str, Any],
    status: int,
    field: str | None,
    message: str,
    org: Org,
    client: Any,
    world: World,
    signed_in: Callable[[str], ConsoleClient],
) -> None:
    browser = signed_in("owner")
    browser.get("/app/services/new")
    answer = browser.post("/app/services", _service_form(**changes))
    assert answer.status == status, answer.body[:800]
    assert message in answer.text()
    dom = answer.dom()
    if field == "hours_days":
        assert dom.find("fieldset", cls="days").find("p", cls="field-error").text()
    elif field is not None:
        assert dom.find(id=f"f-{field}").attrs.get("aria-invalid") == "true"
    assert dom.find("input", name="name").attrs.get("value") == changes.get("name", "Checkout")
    _, listed = _api(org, client, "/api/v1/services")
    assert len(listed["data"]["items"]) == 2


def test_an_admin_edits_a_service_and_blank_fields_clear(
    org: Org, client: Any, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("admin")
    page = browser.get(f"/app/services/{world.service_key}").dom()
    assert page.find("input", name="name").attrs.get("value") == "Payments API"
    assert "selected" in page.find("option", value=world.policy_id).attrs
    answer = browser.post(
        f"/app/services/{world.service_key}",
        _service_form(name="Payments", description="", default_severity="", urgency_type="low", is_active="on"),
    )
    assert answer.status == 303, answer.body[:800]
    assert "Service saved." in browser.follow(answer).text()
    _, saved = _api(org, client, f"/api/v1/services/{world.service_key}")
    data = saved["data"]
    assert (data["name"], data["description"], data["default_severity"], data["escalation_policy_id"]) == (
        "Payments",
        None,
        None,
        None,
    )
    assert data["urgency_rule"] == {"type": "low", "support_hours": None}
    assert data["is_active"] is True
    browser.post(f"/app/services/{world.service_key}", _service_form(name="Payments"))  # no is_active: inactive
    assert _api(org, client, f"/api/v1/services/{world.service_key}")[1]["data"]["is_active"] is False


def test_a_bad_edit_names_the_input_once_and_changes_nothing(
    org: Org, client: Any, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("admin")
    browser.get(f"/app/services/{world.service_key}")
    answer = browser.post(f"/app/services/{world.service_key}", _service_form(name="", hours_start="09:00"))
    assert answer.status == 400
    summary = answer.dom().find(cls="problem")
    assert summary.find_all("li") == []  # each problem is shown at its input, not repeated at the top
    assert summary.text() == "Check the 4 fields marked below."
    fields = answer.dom().find_all("div", cls="field")
    shown = {
        name: box.find("p", cls="field-error").text()
        for box in fields
        for name in ("name", "hours_zone", "hours_end")
        if box.find_all(id=f"f-{name}")
    }
    assert shown == {
        "name": "String should have at least 1 character",
        "hours_zone": "Field required",
        "hours_end": "Field required",
    }
    assert answer.dom().find("fieldset", cls="days").find("p", cls="field-error").text() == "Field required"
    assert len(answer.dom().find_all("p", cls="field-error")) == 4
    assert answer.dom().find(id="f-name").attrs.get("aria-invalid") == "true"
    assert _api(org, client, f"/api/v1/services/{world.service_key}")[1]["data"]["name"] == "Payments API"


@pytest.mark.parametrize("role", ["viewer", "responder"])
def test_a_forged_post_without_services_write_is_refused(
    role: str, org: Org, client: Any, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in(role)
    browser.get("/app/services")
    created = browser.post("/app/services", _service_form())
    edited = browser.post(f"/app/services/{world.service_key}", _service_form(name="Hacked"))
    assert created.status == edited.status == 403
    _, listed = _api(org, client, "/api/v1/services")
    assert sorted(item["name"] for item in listed["data"]["items"]) == ["Payments API", "Search"]


def test_service_forms_refuse_a_missing_or_wrong_csrf_token(
    org: Org, client: Any, world: World, signed_in: Callable[[str], ConsoleClient]
) -> None:
    browser = signed_in("owner")
    browser.get("/app/services/new")
    assert browser.post("/app/services", _service_form(), csrf="-").status == 403
    assert browser.post("/app/services", _service_form(), csrf="bad").status == 403
    _, listed = _api(org, client, "/api/v1/services")
    assert len(listed["data"]["items"]) == 2
