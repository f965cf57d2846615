"""Pure rules of alerts: grouping settings and keys, labels, and which events get a timeline entry."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.alert.repository import labels_of
from chalicelib.catalog.grouping import (
    NO_GROUPING,
    AlertGrouping,
    group_key,
    grouping_from_dict,
    grouping_problems,
    joins,
    window_end,
)
from chalicelib.integration.timeline import worth_an_entry
from tests.conftest import NOW

VALUES = {"title": "Disk full", "source": "alertmanager", "severity": "SEV2", "integration_type": "alertmanager"}


@pytest.mark.parametrize(
    ("grouping", "problem_fields"),
    [
        (AlertGrouping(), []),
        (AlertGrouping("time", 15), []),
        (AlertGrouping("content", None, ("labels.cluster",)), []),
        (AlertGrouping("content", 60, ("title", "labels.env")), []),
        (AlertGrouping("time"), ["alert_grouping.window_minutes"]),
        (AlertGrouping("time", 0), ["alert_grouping.window_minutes"]),
        (AlertGrouping("time", 1441), ["alert_grouping.window_minutes"]),
        (AlertGrouping("time", 5, ("title",)), ["alert_grouping.fields"]),
        (AlertGrouping("content", 5), ["alert_grouping.fields"]),
        (AlertGrouping("content", 5, ("labels.",)), ["alert_grouping.fields"]),
        (AlertGrouping("content", 5, ("owner",)), ["alert_grouping.fields"]),
        (AlertGrouping("content", 5, tuple(f"labels.l{i}" for i in range(11))), ["alert_grouping.fields"]),
        (AlertGrouping("none", 5), ["alert_grouping"]),
    ],
)
def test_grouping_problems(grouping: AlertGrouping, problem_fields: list[str]) -> None:
    assert [name for name, _ in grouping_problems(grouping)] == problem_fields


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        (None, NO_GROUPING),
        ({}, NO_GROUPING),
        ({"type": "bogus"}, NO_GROUPING),
        ({"type": "time", "window_minutes": 5}, AlertGrouping("time", 5)),
        ({"type": "content", "fields": ["title"], "window_minutes": None}, AlertGrouping("content", None, ("title",))),
    ],
)
def test_grouping_round_trips(stored: dict[str, object] | None, expected: AlertGrouping) -> None:
    assert grouping_from_dict(stored) == expected
    assert grouping_from_dict(expected.to_dict()) == expected


def test_group_keys() -> None:
    content = AlertGrouping("content", None, ("labels.cluster", "title"))
    assert group_key(NO_GROUPING, values=VALUES, labels={}) is None
    assert group_key(AlertGrouping("time", 5), values=VALUES, labels={}) == "time"
    eu = group_key(content, values=VALUES, labels={"cluster": "eu"})
    assert eu == group_key(content, values=VALUES, labels={"cluster": "eu", "other": "x"})
    assert eu != group_key(content, values=VALUES, labels={"cluster": "us"})
    assert eu != group_key(content, values={**VALUES, "title": "Disk ok"}, labels={"cluster": "eu"})
    # An absent label and an empty one are different groups.
    assert group_key(content, values=VALUES, labels={}) != group_key(content, values=VALUES, labels={"cluster": ""})


def test_the_window_runs_from_the_first_alert() -> None:
    end = window_end(AlertGrouping("time", 10), NOW)
    assert end == NOW + timedelta(minutes=10)
    assert joins(end, NOW + timedelta(minutes=9, seconds=59))
    assert not joins(end, NOW + timedelta(minutes=10))
    assert window_end(AlertGrouping("content", None, ("title",)), NOW) is None
    assert joins(None, NOW + timedelta(days=30))


def test_labels_drop_the_alertmanager_prefix_and_keep_the_first_of_a_name() -> None:
    assert labels_of({"labels.env": "prod", "env": "stage", "team": "web"}) == {"env": "prod", "team": "web"}
    assert labels_of({"labels.": "x"}) == {"labels.": "x"}
    assert len(labels_of({f"k{i}": "v" for i in range(80)})) == 50


@pytest.mark.parametrize(
    ("count", "entry"),
    [(1, True), (2, True), (5, True), (6, False), (99, False), (100, True), (101, False), (1000, True)],
)
def test_a_storm_of_repeats_writes_a_handful_of_timeline_entries(count: int, entry: bool) -> None:
    assert worth_an_entry(count) is entry
    assert sum(worth_an_entry(n) for n in range(1, 1001)) == 15
