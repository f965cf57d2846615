"""CloudWatch embedded-metric lines against the EMF specification, as tables: the `_aws` member
(Timestamp in Unix milliseconds, one directive: Namespace, Dimensions as arrays of dimension
names each present at the root as a string, Metrics as {Name, Unit} each present at the root as a
number), the limits (at most 30 dimensions a set, 100 metrics a directive, names 1 to 255
characters), and nothing written unless the setting says so."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

import pytest

from chalicelib import emf, logs
from chalicelib.settings import get_settings
from tests.conftest import reconfigure

NOW = datetime(2026, 11, 22, 12, 0, 0, 250000, tzinfo=UTC)
UNITS = {"Seconds", "Microseconds", "Milliseconds", "Bytes", "Count", "Percent", "None", "Count/Second"}


def check_against_the_specification(line: dict[str, Any]) -> None:
    json.dumps(line)  # a JSON object
    aws = line["_aws"]
    assert isinstance(aws["Timestamp"], int) and aws["Timestamp"] > 0
    [directive] = aws["CloudWatchMetrics"]
    assert 1 <= len(directive["Namespace"]) <= 255
    assert directive["Dimensions"] and all(len(dimension_set) <= 30 for dimension_set in directive["Dimensions"])
    for dimension_set in directive["Dimensions"]:
        for name in dimension_set:
            assert isinstance(line[name], str) and 1 <= len(line[name]) <= 1024, name
    assert 1 <= len(directive["Metrics"]) <= 100
    for metric in directive["Metrics"]:
        assert 1 <= len(metric["Name"]) <= 255 and metric["Unit"] in UNITS
        assert isinstance(line[metric["Name"]], int | float) and not isinstance(line[metric["Name"]], bool)


@pytest.mark.parametrize(
    ("line", "dimensions", "values"),
    [
        (
            emf.incident_line("opened", service="svc_web", severity="SEV1", now=NOW),
            {"Service": "svc_web", "Severity": "SEV1"},
            {"IncidentsOpened": (1, "Count")},
        ),
        (
            emf.incident_line("acknowledged", service="svc_web", severity="SEV2", now=NOW, seconds=300),
            {"Service": "svc_web", "Severity": "SEV2"},
            {"IncidentsAcknowledged": (1, "Count"), "TimeToAcknowledge": (300, "Seconds")},
        ),
        (
            emf.incident_line("resolved", service=None, severity="SEV3", now=NOW, seconds=3600.5),
            {"Service": "none", "Severity": "SEV3"},
            {"IncidentsResolved": (1, "Count"), "TimeToResolve": (3600.5, "Seconds")},
        ),
        (
            emf.incident_line("resolved", service="svc", severity="SEV3", now=NOW, seconds=-1),
            {"Service": "svc", "Severity": "SEV3"},
            {"IncidentsResolved": (1, "Count"), "TimeToResolve": (0.0, "Seconds")},  # clocks never go back
        ),
        (
            emf.notification_line(channel="sms", sent=True, now=NOW),
            {"Channel": "sms"},
            {"NotificationsSent": (1, "Count")},
        ),
        (
            emf.notification_line(channel="voice", sent=False, now=NOW),
            {"Channel": "voice"},
            {"NotificationsFailed": (1, "Count")},
        ),
        (
            emf.inbound_line(source="prometheus", outcome="deduplicated", now=NOW),
            {"Source": "prometheus", "Outcome": "deduplicated"},
            {"InboundEvents": (1, "Count")},
        ),
        (
            emf.metric_line(now=NOW, dimensions={"Source": "  "}, metrics={"X": (2, "Count")}),
            {"Source": "none"},  # a dimension value may not be empty
            {"X": (2, "Count")},
        ),
    ],
)
def test_lines(line: dict[str, Any], dimensions: dict[str, str], values: dict[str, tuple[float, str]]) -> None:
    check_against_the_specification(line)
    directive = line["_aws"]["CloudWatchMetrics"][0]
    assert line["_aws"]["Timestamp"] == 1795348800250
    assert directive["Namespace"] == "Tocsin"
    assert directive["Dimensions"] == [list(dimensions), []]  # by dimensions, and the total
    assert directive["Metrics"] == [{"Name": name, "Unit": unit} for name, (_, unit) in values.items()]
    assert {name: line[name] for name in dimensions} == dimensions
    assert {name: line[name] for name in values} == {name: value for name, (value, _) in values.items()}
    assert set(line) == {"_aws", *dimensions, *values}


def test_a_long_dimension_value_is_cut_to_cloudwatchs_limit() -> None:
    line = emf.inbound_line(source="s" * 2000, outcome="created", now=NOW)
    check_against_the_specification(line)
    assert len(line["Source"]) == 1024


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logs.JsonFormatter())
        self.lines: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(self.format(record)))


@pytest.mark.parametrize(
    ("stage", "setting", "written"),
    [
        ("test", None, False),
        ("test", "true", True),
        ("local", None, False),
        ("dev", None, True),
        ("prod", "false", False),
    ],
)
def test_emit_writes_one_json_line_only_when_the_setting_says_so(
    aws_env: None, stage: str, setting: str | None, written: bool
) -> None:
    environment = {"TOCSIN_STAGE": stage, "API_KEY_HMAC_SECRET": "a-real-secret-for-this-test"}
    if setting is not None:
        environment["EMF_METRICS"] = setting
    reconfigure(**environment)
    handler = Lines()
    logger = logging.getLogger("tocsin.metrics")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        emf.emit([emf.notification_line(channel="email", sent=True, now=NOW)], enabled=get_settings().emf_enabled)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    if not written:
        assert handler.lines == []
        return
    [line] = handler.lines
    check_against_the_specification(line)
    assert line["NotificationsSent"] == 1 and line["Channel"] == "email" and line["logger"] == "tocsin.metrics"
