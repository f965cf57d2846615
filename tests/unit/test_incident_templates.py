"""What a template fills into a request: only what the request leaves out, only what the template
has, and only components the page still has."""

from __future__ import annotations

import pytest

from chalicelib.statuspage.incident_templates import FOR_INCIDENT, FOR_UPDATE, fill

TEMPLATE = {
    "title": "Database outage",
    "body": "Looking.",
    "status": "identified",
    "impact": None,
    "component_statuses": {"cmp_a": "major_outage", "cmp_gone": "partial_outage"},
}
COMPONENTS = {"cmp_a", "cmp_b"}


@pytest.mark.parametrize(
    ("given", "names", "expected"),
    [
        (
            {"title": None, "body": None, "status": None, "impact": None, "component_statuses": None},
            FOR_INCIDENT,
            {
                "title": "Database outage",
                "body": "Looking.",
                "status": "identified",
                "impact": None,  # the template has none: the service's default applies
                "component_statuses": {"cmp_a": "major_outage"},  # cmp_gone was deleted
            },
        ),
        (
            {
                "title": "Mine",
                "body": None,
                "status": "monitoring",
                "impact": "major",
                "component_statuses": {"cmp_b": "unknown"},
            },
            FOR_INCIDENT,
            {
                "title": "Mine",
                "body": "Looking.",
                "status": "monitoring",
                "impact": "major",
                "component_statuses": {"cmp_b": "unknown"},
            },
        ),
        # An update takes no title, even when the request would leave one out.
        (
            {"title": None, "body": None, "status": None},
            FOR_UPDATE,
            {"title": None, "body": "Looking.", "status": "identified"},
        ),
    ],
)
def test_fill(given, names, expected):
    assert {k: v for k, v in fill(given, TEMPLATE, names, COMPONENTS).items() if k in expected} == expected


def test_only_deleted_components_fill_nothing():
    template = {**TEMPLATE, "component_statuses": {"cmp_gone": "major_outage"}}
    assert fill({"component_statuses": None}, template, FOR_UPDATE, COMPONENTS)["component_statuses"] is None


def test_the_request_is_not_changed_in_place():
    given = {"body": None}
    fill(given, TEMPLATE, FOR_UPDATE, COMPONENTS)
    assert given == {"body": None}
