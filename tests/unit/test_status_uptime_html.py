"""The uptime bars of the human status page, rendered from an uptime document (pure)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import pytest

from chalicelib.statuspage.page_html import render_status_page
from chalicelib.statuspage.uptime_html import (
    BAR_STYLES,
    CARD_BACKGROUND,
    UPTIME_CSS,
    component_bars,
    percent_text,
    uptime_by_component,
)
from tests.e2e.browser import parse
from tests.unit.test_status_page_html import contrast

NOW = datetime(2026, 11, 24, 13, 0, tzinfo=UTC)
EVIL = '<script>alert("x")</script>'


def days(*special: tuple[int, float | None, str | None]) -> list[dict[str, object]]:
    """90 operational days oldest first, with (days ago, uptime, worst status) overrides."""
    found: list[dict[str, object]] = [
        {
            "date": (date(2026, 11, 24) - timedelta(days=89 - n)).isoformat(),
            "uptime_percent": 100.0,
            "worst_status": "operational",
        }
        for n in range(90)
    ]
    for ago, value, status in special:
        found[89 - ago] |= {"uptime_percent": value, "worst_status": status}
    return found


def document(name: object = "API", figure: float | None = 99.5, **component: object) -> dict[str, object]:
    return {
        "days": 90,
        "components": [{"component_id": "cmp_1", "name": name, "uptime_percent": figure, "days": days()} | component],
    }


def render(uptime: dict[str, object] | None) -> str:
    return render_status_page(
        summary={"page": {"name": "Acme"}, "status": "operational", "updated_at": NOW.isoformat()},
        components={
            "sections": [
                {
                    "section_id": "sec_1",
                    "name": "Core",
                    "components": [{"component_id": "cmp_1", "name": "API", "status": "operational"}],
                    "groups": [],
                }
            ]
        },
        incidents=[],
        maintenance=[],
        now=NOW,
        uptime=uptime,
    )


@pytest.mark.parametrize(
    ("value", "text"), [(100.0, "100%"), (99.5, "99.5%"), (99.95, "99.95%"), (0.0, "0%"), (None, "no data")]
)
def test_percent_text(value, text):
    assert percent_text(value) == text


def test_each_day_is_written_out():
    bars = component_bars(
        {
            "name": "API",
            "uptime_percent": 99.1,
            "days": days(
                (0, 99.5, "partial_outage"),
                (1, 100.0, "under_maintenance"),
                (2, None, "unknown"),
                (3, None, None),
                (4, 97.0, "surprising_status"),
            ),
        },
        90,
    )
    assert len(bars.bars) == 90
    assert [(bar.css, bar.text) for bar in bars.bars[-6:]] == [
        ("up-operational", "19 Nov 2026: 100% uptime, operational"),
        ("up-unknown", "20 Nov 2026: 97% uptime, worst: surprising status"),
        ("up-none", "21 Nov 2026: no data"),
        ("up-unknown", "22 Nov 2026: no uptime data, unknown"),
        ("up-under_maintenance", "23 Nov 2026: 100% uptime, worst: under maintenance"),
        ("up-partial_outage", "24 Nov 2026: 99.5% uptime, worst: partial outage"),
    ]
    assert bars.figure == "99.1% uptime over 90 days"
    # Newest first, the days that were not fully operational (no-data days are not problems).
    assert bars.problems == [
        "24 Nov 2026: 99.5% uptime, worst: partial outage",
        "23 Nov 2026: 100% uptime, worst: under maintenance",
        "22 Nov 2026: no uptime data, unknown",
        "20 Nov 2026: 97% uptime, worst: surprising status",
    ]
    assert bars.problems_summary == "4 days not fully operational"


def test_a_component_without_data_says_so():
    bars = component_bars({"name": "New", "uptime_percent": None, "days": []}, 90)
    assert (bars.figure, bars.problems, bars.problems_summary) == (
        "No uptime data yet",
        [],
        "0 days not fully operational",
    )
    assert uptime_by_component(None) == {} and uptime_by_component({}) == {}


def test_the_page_shows_90_labelled_bars_the_figure_and_a_legend():
    page = parse(render(document(days=days((10, 75.0, "major_outage")))))
    strip = page.find("ol", cls="bars")
    assert strip.attrs["aria-label"] == "API: uptime per day, last 90 days, oldest first"
    bars = strip.find_all("li")
    assert len(bars) == 90
    assert all(bar.text() and bar.attrs["title"] == bar.text() for bar in bars)
    assert bars[79].text() == "14 Nov 2026: 75% uptime, worst: major outage"
    assert page.find("p", cls="scale").text() == "99.5% uptime over 90 days"  # the ends are decoration
    assert (
        page.find("details", cls="days").text()
        == "1 day not fully operational 14 Nov 2026: 75% uptime, worst: major outage"
    )
    legend = page.find("ul", cls="legend")
    assert (
        legend.text()
        == "Operational Degraded performance Partial outage Major outage Under maintenance Unknown No data"
    )
    # The row keeps reading as name and status; the bars are the next item.
    assert [row.text() for row in page.find_all("li", cls="row")] == ["API Operational"]


def test_no_uptime_document_means_no_bars_and_no_legend():
    page = parse(render(None))
    assert page.find_all("ol", cls="bars") == [] and page.find_all("ul", cls="legend") == []


def test_a_day_without_problems_has_no_disclosure():
    page = parse(render(document()))
    assert page.find_all("details") == []


def test_data_is_escaped_in_labels_and_titles():
    markup = render(document(name=EVIL))
    assert "<script>" not in markup
    assert (
        parse(markup).find("ol", cls="bars").attrs["aria-label"]
        == f"{EVIL}: uptime per day, last 90 days, oldest first"
    )
    hostile = document(days=[{"date": '"><b>x</b>', "uptime_percent": 100.0, "worst_status": '"><i>'}])
    markup = render(hostile)
    assert "<b>x</b>" not in markup and "<i>" not in markup
    (bar,) = parse(markup).find("ol", cls="bars").find_all("li")
    assert bar.classes == {"up-unknown"}  # a class never comes from the data


@pytest.mark.parametrize(("status", "colour"), [(status, colour) for status, _, colour in BAR_STYLES])
def test_bar_colours_have_non_text_contrast_against_the_card(status, colour):
    assert contrast(colour, CARD_BACKGROUND) >= 3.0, status


def test_bar_colours_are_distinct_and_set_no_text_colour():
    colours = [colour for _, _, colour in BAR_STYLES]
    assert len(set(colours)) == len(colours)
    for rule in re.findall(r"\{([^{}]*)\}", UPTIME_CSS):
        assert "color:" not in rule.replace("background:", "")
