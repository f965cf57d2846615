"""The console's Insights page: a known history (tests/service/insights_history.py) read through the
page and through the API give the same numbers; every role sees the page; the charts are SVG images
with a title, a description and their numbers as a table; a bad range is named at its field; the
download buttons make a signed export link (exports:read) and redirect to it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

import pytest

from chalicelib import clock
from chalicelib.auth import scopes
from chalicelib.console import charts
from chalicelib.directory import teams
from chalicelib.exports import links
from chalicelib.insights import rollups, writer
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.console.conftest import ROLES, ConsoleClient, Person, action_forms
from tests.kit import factories as make
from tests.kit.api import call
from tests.kit.console import problems_at
from tests.service.insights_history import acknowledge, feed_rollups, move

MONDAY = datetime(2026, 11, 16, tzinfo=UTC)
RANGE = "range=custom&from=2026-11-16&to=2026-11-17"
API_RANGE = "since=2026-11-16T00:00:00Z&until=2026-11-18T00:00:00Z&time_zone=UTC"
DOWNLOAD = [("range", "custom"), ("from", "2026-11-16"), ("to", "2026-11-17"), ("team", "")]


@pytest.fixture(autouse=True)
def frozen_clock() -> Any:
    with clock.frozen(NOW):
        yield


@pytest.fixture
def history(org: Org, people: dict[str, Person]) -> dict[str, Any]:
    """Three incidents in UTC (the organization's zone): Mon 08:00 acknowledged after 60 s and
    resolved after 600 s; Mon 20:00 acknowledged after 300 s and resolved after 3600 s; Tue 02:00
    untouched. The responder is paged at Tue 02:00 (sleep hours) and Tue 10:00 (working hours)."""
    ana = make.person(org, "Ana")
    checkout = make.service(org, "Checkout")
    plan = [(MONDAY + timedelta(hours=8), 60, 600), (MONDAY + timedelta(hours=20), 300, 3600)]
    plan += [(MONDAY + timedelta(days=1, hours=2), None, None)]
    for at, ack_after, resolve_after in plan:
        made = make.incident(org, checkout, severity="SEV2", now=at)
        if ack_after is not None:
            acknowledge(org.organization_id, made.incident_number, ana, at + timedelta(seconds=ack_after))
        if resolve_after is not None:
            move(org.organization_id, made.incident_number, "resolved", ana, at + timedelta(seconds=resolve_after))
    feed_rollups()
    for hour in (26, 34):
        page = rollups.paged(
            org.organization_id,
            delivery_id=f"d{hour}",
            person=people["responder"].user_id,
            channels=["sms"],
            urgency="high",
            at=MONDAY + timedelta(hours=hour),
            failed_channels=[],
        )
        assert page is not None
        writer.apply(page, now=NOW)
    return {"service": checkout}


def _api(client: Any, org: Org, kind: str) -> dict[str, Any]:
    status, document = call(client, "GET", f"/api/v1/insights/{kind}?{API_RANGE}", org.owner_key)
    assert status == 200, document
    return dict(document["data"])


def _figures(page: Any) -> dict[str, str]:
    return {
        figure.find("dt").text(): " ".join(figure.find("dd").text().split())
        for figure in page.find("dl", cls="figures").find_all("div", cls="figure")
    }


def _table(figure: Any) -> list[list[str]]:
    rows = figure.find("details", cls="data").find("tbody").find_all("tr")
    return [[cell.text().strip() for cell in row.iter() if cell.tag in ("th", "td")] for row in rows]


def _chart(page: Any, key: str) -> Any:
    (figure,) = [f for f in page.find_all("figure", cls="chart") if f.attrs.get("aria-labelledby") == f"{key}-h"]
    return figure


def _time(seconds: float | None) -> str:
    return "—" if seconds is None else charts.duration(seconds)


def test_the_page_shows_the_apis_numbers_for_the_same_history(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, history: dict[str, Any]
) -> None:
    answer = signed_in("viewer").get(f"/app/insights?{RANGE}")
    assert answer.status == 200, answer.body[:2000]
    page = answer.dom()
    incidents = _api(client, org, "incidents")
    responders = _api(client, org, "responders")
    totals = incidents["totals"]
    mtta, mttr = totals["mtta_seconds"], totals["mttr_seconds"]
    assert (totals["count"], mtta["mean"], mttr["mean"]) == (3, 180.0, 2100.0)  # the history as planned
    sleep = sum(person["interruptions"]["sleep"] for person in responders["people"])
    pages = sum(person["pages"]["total"] for person in responders["people"])
    assert (sleep, pages) == (1, 2)
    share = totals["acknowledged_within_sla_share"]
    assert _figures(page) == {
        "Incidents": "3",
        "Time to acknowledge": f"{_time(mtta['p50'])} median {_time(mtta['mean'])} mean",
        "Time to resolve": f"{_time(mttr['p50'])} median {_time(mttr['mean'])} mean",
        "Acknowledged within SLA": f"{share * 100:.0f} % ({totals['acknowledged_within_sla']} of 3)",
        "Night interruptions": "1 of 2 pages",
    }
    buckets = incidents["groups"][0]["buckets"]
    assert _table(_chart(page, "incidents")) == [["16 Nov", "2"], ["17 Nov", "1"]]
    assert [b["count"] for b in buckets] == [2, 1]
    assert _table(_chart(page, "mtta_seconds")) == [
        ["16 Nov", _time(buckets[0]["mtta_seconds"]["mean"]), _time(buckets[0]["mtta_seconds"]["p50"])],
        ["17 Nov", "—", "—"],
    ]
    assert _table(_chart(page, "mttr_seconds"))[0][1] == _time(buckets[0]["mttr_seconds"]["mean"])
    expected = [
        [
            person["user"]["name"],
            str(person["pages"]["total"]),
            *(str(person["interruptions"][band]) for band in ("working", "evening", "sleep")),
            f"{person['on_call_hours']['total']:g}",
        ]
        for person in sorted(responders["people"], key=lambda p: (-p["pages"]["total"], p["user"]["name"]))
    ]
    assert _table(_chart(page, "load")) == expected
    assert expected[0][1:5] == ["2", "1", "0", "1"]  # the responder: paged at 02:00 (asleep) and 10:00
    # The bars: one per day with incidents, heights in proportion (2 and 1).
    bars = _chart(page, "incidents").find("svg", cls="plot").find_all("rect")
    heights = sorted(float(str(bar.attrs["height"])) for bar in bars)
    assert len(heights) == 2 and heights[1] == pytest.approx(2 * heights[0])


def test_every_chart_is_a_labelled_image_with_its_numbers_as_text(
    signed_in: Callable[[str], ConsoleClient], history: dict[str, Any]
) -> None:
    page = signed_in("owner").get(f"/app/insights?{RANGE}").dom()
    figures = page.find_all("figure", cls="chart")
    assert [f.attrs["aria-labelledby"] for f in figures] == [
        "incidents-h", "mtta_seconds-h", "mttr_seconds-h", "load-h", "noisy-h",
    ]  # fmt: skip
    for figure in figures[:4]:  # the history has no alerts: the noisy sources chart says so instead
        key = str(figure.attrs["aria-labelledby"])[:-2]
        svg = figure.find("svg", cls="plot")
        assert svg.attrs["role"] == "img"
        assert svg.attrs["aria-labelledby"] == f"{key}-title {key}-desc"
        assert svg.attrs["viewbox"] is not None or svg.attrs.get("viewBox") is not None
        assert svg.find("title", id=f"{key}-title").text() == figure.find("h3").text()
        assert svg.find("desc", id=f"{key}-desc").text()
        assert figure.find("details", cls="data").find("summary").text().endswith("the numbers")
    assert "No alerts in this range." in _chart(page, "noisy").text()
    assert "3 incidents over 2 days; the most, 2, in 16 Nov." in _chart(page, "incidents").text()


@pytest.mark.parametrize("role", ROLES)
def test_every_role_sees_the_page_in_the_menu_and_the_downloads(
    signed_in: Callable[[str], ConsoleClient], role: str
) -> None:
    answer = signed_in(role).get("/app/insights")
    assert answer.status == 200, answer.body[:1000]
    links_in_menu = [a for a in answer.dom().find("nav", cls="menu-wide").find_all("a")]
    assert [a.attrs.get("aria-current") for a in links_in_menu if a.text() == "Insights"] == ["page"]
    kinds = ("alerts", "incidents", "notifications", "shifts")
    assert sorted(action_forms(answer)) == [f"/app/insights/exports/{kind}" for kind in kinds]


def test_without_the_exports_scope_there_are_no_downloads_and_a_forged_post_is_refused(
    signed_in: Callable[[str], ConsoleClient],
) -> None:
    without = scopes.ROLE_SCOPES["viewer"] - {"exports:read"}
    with mock.patch.dict(scopes.ROLE_SCOPES, {"viewer": without}):
        viewer = signed_in("viewer")
        answer = viewer.get("/app/insights")
        assert answer.status == 200
        assert action_forms(answer) == []
        refused = viewer.post("/app/insights/exports/incidents", DOWNLOAD)
        assert refused.status == 403
        assert "did not come from Tocsin" not in refused.body  # refused for the scope, not the form token


def test_a_download_redirects_to_a_signed_link_of_the_range_and_team(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, people: dict[str, Person], history: dict
) -> None:
    team = teams.create_team(organization_id=org.organization_id, name="Payments", now=NOW, member_ids=[])
    browser = signed_in("viewer")
    browser.get("/app/insights")  # the page's form token
    answer = browser.post("/app/insights/exports/incidents", DOWNLOAD)
    assert answer.status == 303, answer.body[:1000]
    token = urlsplit(answer.location).path.rsplit("/", 1)[1]
    link = links.verify(token, now=NOW, settings=get_settings())
    assert (link.request.kind, link.request.organization_id, link.export_format) == (
        "incidents", org.organization_id, "csv",
    )  # fmt: skip
    assert (link.request.since, link.request.until) == (MONDAY, MONDAY + timedelta(days=2))
    assert link.request.filters == {}
    download = client.http.get(urlsplit(answer.location).path)
    assert download.status_code == 200
    assert len(download.body.decode().strip().splitlines()) == 1 + 3  # the header and the three incidents
    by_team = [(name, team.team_id if name == "team" else value) for name, value in DOWNLOAD]
    for kind, filters in (("shifts", {"team": team.team_id}), ("alerts", {})):
        answer = browser.post(f"/app/insights/exports/{kind}", by_team)
        assert answer.status == 303, answer.body[:1000]
        assert (
            links.verify(
                urlsplit(answer.location).path.rsplit("/", 1)[1], now=NOW, settings=get_settings()
            ).request.filters
            == filters
        )


def test_a_post_without_the_form_token_changes_nothing(signed_in: Callable[[str], ConsoleClient]) -> None:
    assert signed_in("owner").post("/app/insights/exports/incidents", DOWNLOAD, csrf="-").status == 403


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("range=custom&from=&to=2026-11-17", "from", "enter a date (YYYY-MM-DD) for a range of your own"),
        ("range=custom&from=2026-11-16&to=17/11/2026", "to", "must be a date, YYYY-MM-DD"),
        ("range=custom&from=2026-11-17&to=2026-11-16", "to", "must be on or after From"),
        ("range=custom&from=2025-01-01&to=2026-11-16", "from", "the range may be at most 400 days"),
        ("range=365", "range", "choose the last 7, 30 or 90 days, or From-To dates"),
        ("team=tm_nope", "team", "choose a team from the list, or All teams"),
    ],
)
def test_a_bad_range_is_named_at_its_field(
    signed_in: Callable[[str], ConsoleClient], query: str, field: str, message: str
) -> None:
    answer = signed_in("viewer").get(f"/app/insights?{query}")
    assert answer.status == 400
    assert problems_at(answer, field) == [message]
    assert answer.dom().find_all("figure", cls="chart") == []
    assert action_forms(answer) == []  # no download of a range that is not one


def test_a_download_of_a_range_longer_than_an_export_takes_is_named_at_to(
    signed_in: Callable[[str], ConsoleClient],
) -> None:
    fields = [("range", "custom"), ("from", "2025-10-01"), ("to", "2026-10-31"), ("team", "")]
    browser = signed_in("owner")
    browser.get("/app/insights")
    answer = browser.post("/app/insights/exports/alerts", fields)
    assert answer.status == 400
    assert problems_at(answer, "to") == ["must be at most 366 days after since"]
    assert answer.dom().find_all("div", cls="problem")  # the page's problem box, the field marked


def test_the_page_with_figures_and_refused_has_the_structure_assistive_technology_needs(
    signed_in: Callable[[str], ConsoleClient], history: dict[str, Any]
) -> None:
    from tests.console.test_accessibility import _problems

    browser = signed_in("owner")
    shown = browser.get(f"/app/insights?{RANGE}")
    refused = browser.get("/app/insights?range=custom&from=2026-11-17&to=2026-11-16")
    assert (shown.status, refused.status) == (200, 400)
    assert {"shown": _problems(shown.dom()), "refused": _problems(refused.dom())} == {"shown": [], "refused": []}


def test_a_team_narrows_the_figures_as_the_apis_team_ids_do(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, people: dict[str, Person], history: dict
) -> None:
    team = teams.create_team(
        organization_id=org.organization_id, name="Payments", now=NOW, member_ids=[people["responder"].user_id]
    )
    answer = signed_in("viewer").get(f"/app/insights?{RANGE}&team={team.team_id}")
    assert answer.status == 200, answer.body[:1000]
    page = answer.dom()
    query = f"/api/v1/insights/responders?{API_RANGE}&team_ids={team.team_id}"
    status, document = call(client, "GET", query, org.owner_key)
    assert status == 200, document
    [person] = document["data"]["people"]
    assert person["user"]["id"] == people["responder"].user_id
    assert [row[0] for row in _table(_chart(page, "load"))] == [person["user"]["name"]]
    status, document = call(
        client, "GET", f"/api/v1/insights/incidents?{API_RANGE}&team_ids={team.team_id}", org.owner_key
    )
    assert status == 200, document
    assert _figures(page)["Incidents"] == str(document["data"]["totals"]["count"]) == "0"  # no incident is the team's
    assert _figures(page)["Night interruptions"] == "1 of 2 pages"
    assert "Payments" in page.find("main").text()
    selected = [o for o in page.find("select", name="team").find_all("option") if "selected" in o.attrs]
    assert [o.attrs["value"] for o in selected] == [team.team_id]


@pytest.mark.parametrize(
    ("query", "rows", "first", "last", "said"),
    [
        ("range=7", 7, "16 Nov", "22 Nov", "16 Nov 2026 to 22 Nov 2026, all teams, by day."),
        ("", 30, "24 Oct", "22 Nov", "24 Oct 2026 to 22 Nov 2026, all teams, by day."),
        ("range=90", 13, "wk 24 Aug", "wk 16 Nov", "25 Aug 2026 to 22 Nov 2026, all teams, by week."),
        ("range=custom&from=2026-11-22&to=2026-11-22", 1, "22 Nov", "22 Nov", "22 Nov 2026, all teams, by day."),
    ],
)
def test_presets_are_whole_local_days_up_to_today_by_day_or_week(
    signed_in: Callable[[str], ConsoleClient], query: str, rows: int, first: str, last: str, said: str
) -> None:
    answer = signed_in("viewer").get(f"/app/insights?{query}")
    assert answer.status == 200, answer.body[:1000]
    table = _table(_chart(answer.dom(), "incidents"))
    assert (len(table), table[0][0], table[-1][0]) == (rows, first, last)
    assert said in " ".join(answer.dom().find("main").text().split())
