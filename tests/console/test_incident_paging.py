"""An incident nobody is paged about says so in the console: a warning on its page (with why) and
a mark in the list, the same status the API's paging field gives; an incident whose escalation
reaches someone shows neither."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.console.conftest import ConsoleClient, Person
from tests.console.incident_data import World, incident_via_api, seed

Browser = Callable[[str], ConsoleClient]


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    """The console's incidents; Search (no policy) has had its escalation decided: nobody."""
    from chalicelib.paging import escalation_runs

    seeded = seed(org, people)
    escalation_runs.begin(
        organization_id=org.organization_id, incident_number=seeded.search_slow, now=NOW, settings=get_settings()
    )
    return seeded


def facts(answer: Any) -> dict[str, str]:
    dom = answer.dom()
    return {dt.text(): dd.text() for dt, dd in zip(dom.find_all("dt"), dom.find_all("dd"), strict=True)}


def test_the_incident_page_warns_that_nobody_is_paged_and_why(
    signed_in: Browser, world: World, client: Any, org: Org
) -> None:
    answer = signed_in("viewer").get(f"/app/incidents/{world.search_slow}")
    assert answer.status == 200
    (warning,) = answer.dom().find_all("div", id="paging-warning")
    assert warning.attrs.get("role") == "alert"
    assert "Nobody is being paged about this incident." in warning.text()
    assert "Service Search has no escalation policy." in warning.text()
    assert facts(answer)["Paging"] == "Nobody"
    assert "Nobody to page" in answer.text()  # the timeline entry
    paging = incident_via_api(client, org, world.search_slow)["paging"]
    assert paging == {
        "status": "nobody",
        "reason": "Service Search has no escalation policy.",
        "level": None,
        "fallback_contacts": [],
    }


def test_an_undecided_incident_shows_no_warning(signed_in: Browser, world: World) -> None:
    answer = signed_in("responder").get(f"/app/incidents/{world.checkout_down}")
    assert answer.dom().find_all("div", id="paging-warning") == []
    assert facts(answer)["Paging"] == "Starting"


def test_the_list_marks_the_incidents_nobody_is_paged_about(signed_in: Browser, world: World) -> None:
    answer = signed_in("viewer").get("/app/incidents")
    marked = {
        row.find("a").text().split()[0]: [badge.text() for badge in row.find_all("span", cls="nobody-paged")]
        for row in answer.dom().find("tbody").find_all("tr")
    }
    assert marked == {world.search_slow: ["nobody paged"], world.checkout_down: []}
    (badge,) = answer.dom().find_all("span", cls="nobody-paged")
    assert badge.attrs.get("title") == "Service Search has no escalation policy."


def test_fallback_contacts_paged_are_named(signed_in: Browser, org: Org, people: dict[str, Person]) -> None:
    from chalicelib.paging import escalation_runs, fallback

    seeded = seed(org, people)
    fallback.save_paging_settings(organization_id=org.organization_id, fallback_contacts=[people["admin"].email])
    escalation_runs.begin(
        organization_id=org.organization_id, incident_number=seeded.search_slow, now=NOW, settings=get_settings()
    )
    browser = signed_in("viewer")
    (warning,) = browser.get(f"/app/incidents/{seeded.search_slow}").dom().find_all("div", id="paging-warning")
    assert "the fallback contacts were paged instead" in warning.text()
    assert people["admin"].name in warning.text()
    (badge,) = browser.get("/app/incidents").dom().find_all("span", cls="nobody-paged")
    assert badge.text() == "fallback contacts paged"
