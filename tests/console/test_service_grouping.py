"""A service's alert grouping on the service forms: saved as the API's alert_grouping (checked
through the API), refused with the API's words next to the input, and shown in words."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.catalog.grouping import AlertGrouping
from chalicelib.console.grouping_form import problem_input, words
from tests.conftest import Org
from tests.console.conftest import ConsoleClient, Person
from tests.console.routing_world import World, build_world

Browser = Callable[[str], ConsoleClient]
NONE = {"type": "none", "window_minutes": None, "fields": None}  # as the API answers it


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return build_world(org, people)


def _grouping(org: Org, client: Any, key: str) -> Any:
    answer = client.http.get(f"/api/v1/services/{key}", headers={"Authorization": f"Bearer {org.owner_key}"})
    return json.loads(answer.body)["data"]["alert_grouping"]


def _form(name: str = "Checkout", **grouping: Any) -> list[tuple[str, str]]:
    fields: dict[str, Any] = {
        "name": name,
        "description": "",
        "team_id": "",
        "escalation_policy_id": "",
        "default_severity": "",
        "urgency_type": "severity_based",
        "grouping_type": "none",
        "grouping_window": "",
        "grouping_fields": [],
        "grouping_labels": "",
        "is_active": "on",
    }
    fields.update(grouping)
    items: list[tuple[str, str]] = []
    for key, value in fields.items():
        items.extend((key, v) for v in value) if isinstance(value, list) else items.append((key, value))
    return items


def test_a_new_service_groups_by_content_and_says_so_in_words(org: Org, client: Any, signed_in: Browser) -> None:
    browser = signed_in("admin")
    form = browser.get("/app/services/new").dom()
    assert "selected" in form.find("select", name="grouping_type").find("option", value="none").attrs
    answer = browser.post(
        "/app/services",
        _form(grouping_type="content", grouping_window="30", grouping_fields=["title"], grouping_labels="env, region"),
    )
    assert answer.status == 303, answer.body[:800]
    key = answer.location.split("/app/services/")[1].split("?")[0]
    assert _grouping(org, client, key) == {
        "type": "content",
        "fields": ["title", "labels.env", "labels.region"],
        "window_minutes": 30,
    }
    page = browser.follow(answer).dom()
    said = "Content: alerts with the same title, labels.env and labels.region within 30 minutes of the first"
    assert said in page.find("dl", cls="facts").text()
    assert "checked" in page.find("input", name="grouping_fields", value="title").attrs
    assert page.find("input", name="grouping_labels").attrs["value"] == "env, region"
    assert page.find("input", name="grouping_window").attrs["value"] == "30"


def test_an_edit_switches_grouping_and_the_list_says_which(
    org: Org, client: Any, world: World, signed_in: Browser
) -> None:
    browser = signed_in("owner")
    path = f"/app/services/{world.service_key}"
    browser.get(path)
    saved = browser.post(path, _form("Payments API", grouping_type="time", grouping_window="15"))
    assert saved.status == 303, saved.body[:800]
    assert _grouping(org, client, world.service_key) == {"type": "time", "window_minutes": 15, "fields": None}
    rows = browser.get("/app/services").dom().find("tbody").find_all("tr")
    row = next(r for r in rows if "Payments API" in r.text())
    assert row.find("td", **{"data-label": "Alert grouping"}).text() == (
        "Time: alerts within 15 minutes of the first join its incident"
    )
    # Without script every input is on the form: what the chosen type does not take is not sent.
    left_over = browser.post(
        path, _form("Payments API", grouping_type="none", grouping_window="15", grouping_fields=["title"])
    )
    assert left_over.status == 303, left_over.body[:800]
    assert _grouping(org, client, world.service_key) == NONE
    time_with_fields = browser.post(
        path, _form("Payments API", grouping_type="time", grouping_window="5", grouping_fields=["title"])
    )
    assert time_with_fields.status == 303
    assert _grouping(org, client, world.service_key) == {"type": "time", "window_minutes": 5, "fields": None}
    no_window = browser.post(path, _form("Payments API", grouping_type="content", grouping_fields=["dedup_key"]))
    assert no_window.status == 303
    assert _grouping(org, client, world.service_key) == {
        "type": "content",
        "fields": ["dedup_key"],
        "window_minutes": None,
    }
    assert "join the open incident of the first" in browser.follow(no_window).dom().find("dl", cls="facts").text()


def test_a_form_without_grouping_inputs_leaves_the_setting_alone(
    org: Org, client: Any, world: World, signed_in: Browser
) -> None:
    browser = signed_in("owner")
    path = f"/app/services/{world.service_key}"
    browser.get(path)
    browser.post(path, _form("Payments API", grouping_type="time", grouping_window="10"))
    bare = [(name, value) for name, value in _form("Payments API") if not name.startswith("grouping_")]
    assert browser.post(path, bare).status == 303
    assert _grouping(org, client, world.service_key) == {"type": "time", "window_minutes": 10, "fields": None}


@pytest.mark.parametrize(
    ("grouping", "field", "message"),
    [
        ({"grouping_type": "time", "grouping_window": "0"}, "grouping_window", "greater than or equal to 1"),
        ({"grouping_type": "time", "grouping_window": "1441"}, "grouping_window", "less than or equal to 1440"),
        ({"grouping_type": "time", "grouping_window": "soon"}, "grouping_window", "valid integer"),
        ({"grouping_type": "time"}, "grouping_window", "is required for time grouping"),
        ({"grouping_type": "content", "grouping_window": "5"}, "grouping_fields", "needs at least one field"),
        (
            {"grouping_type": "content", "grouping_labels": "x" * 101},
            "grouping_fields",
            "is not one of",
        ),
        ({"grouping_type": "sometimes"}, "grouping_type", "'none', 'time' or 'content'"),
    ],
)
def test_a_bad_grouping_is_refused_next_to_its_input_and_changes_nothing(
    grouping: dict[str, Any], field: str, message: str, org: Org, client: Any, world: World, signed_in: Browser
) -> None:
    browser = signed_in("admin")
    path = f"/app/services/{world.service_key}"
    browser.get(path)
    answer = browser.post(path, _form("Payments API", **grouping))
    assert answer.status == 400, answer.body[:800]
    page = answer.dom()
    if field == "grouping_fields":
        fieldset = next(f for f in page.find_all("fieldset", cls="choices") if "fields that must" in f.text())
        assert message in fieldset.find("p", cls="field-error").text()
    else:
        assert page.find(id=f"f-{field}").attrs.get("aria-invalid") == "true"
        assert message in page.find(id=f"e-f-{field}").text()
    assert page.find("input", name="grouping_window").attrs["value"] == grouping.get("grouping_window", "")
    assert _grouping(org, client, world.service_key) == NONE
    created = browser.post("/app/services", _form("Another", **grouping))
    assert created.status == 400 and message in created.text()
    listed = client.http.get("/api/v1/services", headers={"Authorization": f"Bearer {org.owner_key}"})
    assert "Another" not in listed.body.decode()


def test_the_grouping_in_words_and_problems_by_input() -> None:
    assert words(AlertGrouping()) == "None: each alert opens its own incident"
    assert words(AlertGrouping(type="time", window_minutes=1)) == (
        "Time: alerts within 1 minute of the first join its incident"
    )
    assert words(AlertGrouping(type="content", fields=("title",), window_minutes=None)) == (
        "Content: alerts with the same title join the open incident of the first"
    )
    assert words(AlertGrouping(type="content", fields=("title", "source"), window_minutes=60)) == (
        "Content: alerts with the same title and source within 60 minutes of the first join its incident"
    )
    assert problem_input("alert_grouping.window_minutes") == "grouping_window"
    assert problem_input("alert_grouping.fields.3") == "grouping_fields"
    assert problem_input("alert_grouping") == "grouping_type"
    assert problem_input("alert_grouping.type") == "grouping_type"
    assert problem_input("alert_groupings") is None and problem_input("name") is None
