from __future__ import annotations

import typing

import pytest

from chalicelib import severity
from chalicelib.errors import InvalidSeverity
from chalicelib.severity import (
    DEFAULT_SEVERITY,
    PAGERDUTY_WORDS,
    SEVERITIES,
    SEVERITY_WORDS,
    is_severity,
    parse_severity,
    rank,
    severity_or_default,
    severity_word,
    urgency,
    word_key,
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


# --- the one table of severity words inbound sources map through (issue 26) ------------------------


@pytest.mark.parametrize(
    ("word", "source", "expected"),
    [
        # canonical names, in any case and spelling of the separator
        *[(f"SEV{n}", None, f"SEV{n}") for n in range(5)],
        ("sev0", None, "SEV0"),
        (" Sev-2 ", None, "SEV2"),
        ("SEV_3", None, "SEV3"),
        # the legacy payload's words
        ("Critical", None, "SEV0"),
        ("High", None, "SEV1"),
        ("Medium", None, "SEV2"),
        ("Low", None, "SEV3"),
        ("Pre-emptive", None, "SEV4"),
        ("PREEMPTIVE", None, "SEV4"),
        # monitoring words
        ("critical", None, "SEV0"),
        ("error", None, "SEV1"),
        ("warning", None, "SEV2"),
        ("info", None, "SEV3"),
        ("fatal", None, "SEV0"),
        ("warn", None, "SEV2"),
        ("debug", None, "SEV4"),
        # priorities
        ("P1", None, "SEV0"),
        ("P2", None, "SEV1"),
        ("p3", None, "SEV2"),
        ("P4", None, "SEV3"),
        ("P5", None, "SEV4"),
        ("P 1", None, "SEV0"),
        # per-source words the contract fixes
        ("none", "alertmanager", "SEV4"),
        ("low", "alertmanager", "SEV4"),
        ("critical", "alertmanager", "SEV0"),
        ("sample", "sentry", "SEV4"),
        ("debug", "sentry", "SEV4"),
        ("critical", "sentry_metric", "SEV1"),
        ("warning", "sentry_metric", "SEV2"),
        ("low", "newrelic", "SEV3"),
        ("critical", "pagerduty", "SEV0"),
        ("error", "pagerduty", "SEV1"),
        ("warning", "pagerduty", "SEV2"),
        ("info", "pagerduty", "SEV3"),
        # words no table knows: the service's default (None)
        ("none", None, None),
        ("sample", None, None),
        ("SEV5", None, None),
        ("P0", None, None),
        ("P6", None, None),
        ("urgent", None, None),
        ("", None, None),
        ("   ", None, None),
        (None, None, None),
        (True, None, None),
        (1, None, None),
        (["SEV1"], None, None),
        ({"level": "SEV1"}, None, None),
    ],
)
def test_severity_words(word, source, expected):
    assert severity_word(word, source) == expected


def test_the_table_maps_only_to_canonical_severities_and_keys_are_word_keys():
    assert set(SEVERITY_WORDS.values()) == set(SEVERITIES)
    assert all(word_key(key) == key for key in SEVERITY_WORDS)
    assert [severity_word(word, "pagerduty") for word in PAGERDUTY_WORDS] == ["SEV0", "SEV1", "SEV2", "SEV3"]


def test_the_api_parse_stays_strict():
    # Incident create and update take the five names only; the words are for inbound alerts.
    with pytest.raises(InvalidSeverity):
        parse_severity("critical")
