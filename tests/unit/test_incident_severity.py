from __future__ import annotations

import typing

import pytest

from chalicelib import severity
from chalicelib.errors import InvalidSeverity
from chalicelib.severity import (
    DEFAULT_SEVERITY,
    SEVERITIES,
    is_severity,
    parse_severity,
    rank,
    severity_or_default,
    urgency,
)


def test_constants():
    assert SEVERITIES == ("SEV0", "SEV1", "SEV2", "SEV3", "SEV4")
    assert typing.get_args(severity.Severity) == SEVERITIES
    assert DEFAULT_SEVERITY == "SEV3"


@pytest.mark.parametrize(("raw", "expected"), [("SEV0", "SEV0"), ("sev4", "SEV4"), (" Sev2 ", "SEV2")])
def test_parse(raw, expected):
    assert parse_severity(raw) == expected


@pytest.mark.parametrize("raw", ["SEV5", "SEV-1", "", "critical", None, 1, ["SEV1"], "SEV 1"])
def test_parse_refuses(raw):
    with pytest.raises(InvalidSeverity) as caught:
        parse_severity(raw)
    assert caught.value.code == "INVALID_SEVERITY"
    assert caught.value.status == 400
    assert caught.value.details == {"allowed": list(SEVERITIES)}


def test_is_severity_is_exact():
    assert is_severity("SEV1")
    assert not is_severity("sev1")
    assert not is_severity(None)


@pytest.mark.parametrize(
    ("sev", "expected"), [("SEV0", "high"), ("SEV1", "high"), ("SEV2", "low"), ("SEV3", "low"), ("SEV4", "low")]
)
def test_urgency(sev, expected):
    assert urgency(sev) == expected


def test_urgency_refuses_unknown():
    with pytest.raises(InvalidSeverity):
        urgency("SEV9")


def test_rank_orders_most_severe_first():
    assert sorted(["SEV3", "SEV0", "SEV4", "SEV1"], key=rank) == ["SEV0", "SEV1", "SEV3", "SEV4"]


def test_severity_or_default():
    assert severity_or_default("sev1") == "SEV1"
    assert severity_or_default(None, "SEV2") == "SEV2"
    assert severity_or_default(None, None) == "SEV3"
    assert severity_or_default("SEV0", "SEV4") == "SEV0"
    with pytest.raises(InvalidSeverity):
        severity_or_default("bad", "SEV1")
