"""What a page tells a responder besides the title, read from an incident: labels, links, the
description's first sentence. Pure."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from chalicelib.notification import page_facts

ALERTMANAGER_METADATA = {
    "flavor": "alertmanager",
    "version": "4",
    "receiver": "tocsin",
    "alertname": "HighErrorRate",
    "firing": "1",
    "resolved": "0",
    "labels.alertname": "HighErrorRate",
    "labels.severity": "critical",
    "labels.service_id": "SER-00001",
    "labels.env": "prod",
    "labels.job": "checkout-api",
}


def incident(source: dict[str, Any] | None = None, **fields: Any) -> Any:
    return SimpleNamespace(source=source, **fields)


@pytest.mark.parametrize(
    ("metadata", "limit", "labels"),
    [
        # The source's own labels when it has them: bookkeeping keys, severity and service id left out.
        (ALERTMANAGER_METADATA, 6, (("alertname", "HighErrorRate"), ("env", "prod"), ("job", "checkout-api"))),
        (ALERTMANAGER_METADATA, 2, (("alertname", "HighErrorRate"), ("env", "prod"))),
        # A custom webhook's metadata is its labels.
        ({"region": "eu-west-1", "team": "payments"}, 6, (("region", "eu-west-1"), ("team", "payments"))),
        # A legacy webhook's tags.
        ({"customer_impact": "true", "tags.team": "core"}, 6, (("team", "core"),)),
        # Blank values and runbook keys (the page links the runbook) are not labels.
        ({"env": " ", "runbook_url": "https://r.example", "zone": "b"}, 6, (("zone", "b"),)),
        ({}, 6, ()),
        ({"a": "1", "b": "2"}, 0, ()),
    ],
)
def test_labels_table(metadata: dict[str, str], limit: int, labels: tuple[tuple[str, str], ...]) -> None:
    assert page_facts.labels_of(metadata, limit) == labels
    assert page_facts.incident_labels(incident({"metadata": metadata}), limit) == labels


def test_an_incident_without_an_alert_has_no_labels_or_links() -> None:
    for bare in (incident(None), incident({}), incident({"metadata": "not a mapping", "source_url": 42})):
        assert page_facts.incident_labels(bare, 6) == ()
        assert page_facts.source_link(bare) is None and page_facts.runbook_link(bare) is None
        assert page_facts.source_name(bare) is None


@pytest.mark.parametrize(
    ("value", "link"),
    [
        ("https://grafana.example/d/abc?x=1&y=2", "https://grafana.example/d/abc?x=1&y=2"),
        ("  http://am.example:9093/#/alerts  ", "http://am.example:9093/#/alerts"),
        ("javascript:alert(1)", None),
        ("data:text/html,<b>x</b>", None),
        ("ftp://files.example/x", None),
        ("https://", None),
        ("//evil.example/x", None),
        ("https://a.example/with space", None),
        ("https://a.example/\x00", None),
        ("https://[::1", None),
        ("https://a.example/" + "x" * 2100, None),
        ("", None),
        (None, None),
        (42, None),
    ],
)
def test_only_absolute_http_links_are_shown(value: object, link: str | None) -> None:
    assert page_facts.web_link(value) == link
    assert page_facts.source_link(incident({"source_url": value})) == link


@pytest.mark.parametrize(
    ("record", "runbook"),
    [
        # The incident's own field (another branch adds it) wins.
        (incident({"runbook_url": "https://b.example"}, runbook_url="https://a.example"), "https://a.example"),
        (incident({"runbook_url": "https://b.example"}, runbook_url="javascript:x"), "https://b.example"),
        (incident({"runbook_url": "https://b.example"}), "https://b.example"),
        (incident({"metadata": {"annotations.runbook_url": "https://c.example"}}), "https://c.example"),
        (incident({"metadata": {"runbook": "https://d.example"}}), "https://d.example"),
        (incident({"metadata": {"runbook": "see the wiki"}}), None),
        (incident({"source_url": "https://am.example"}), None),
    ],
)
def test_the_runbook_link_table(record: Any, runbook: str | None) -> None:
    assert page_facts.runbook_link(record) == runbook


def test_the_source_is_named_for_its_link() -> None:
    assert page_facts.source_name(incident({"source": "alertmanager"})) == "Alertmanager"
    assert page_facts.source_name(incident({"source": "custom"})) == "Custom webhook"
    assert page_facts.source_name(incident({"source": "nagios"})) is None


@pytest.mark.parametrize(
    ("text", "limit", "sentence"),
    [
        ("Error rate above 5%. Since the deploy.", 200, "Error rate above 5%."),
        ("Error rate above 5% on https://grafana.example/d/abc. Since then.", 200, "Error rate above 5% on."),
        ("See www.example.com/runbook, then page the DBA.", 200, "See, then page the DBA."),
        ("\n\n  First line\nsecond line. More.", 200, "First line"),
        ("One long sentence " * 30, 40, "One long sentence One long sentence"),  # cut at a word
        ("https://only.example/a-link", 200, None),
        ("", 200, None),
        (None, 200, None),
    ],
)
def test_first_sentence_table(text: str | None, limit: int, sentence: str | None) -> None:
    assert page_facts.first_sentence(text, limit) == sentence


@pytest.mark.parametrize(
    ("text", "limit", "short"),
    [
        ("short", 10, "short"),
        ("exactly ten", 11, "exactly ten"),
        ("words that go on and on", 12, "words that\u2026"),
        ("averyveryverylongword", 8, "averyve\u2026"),
    ],
)
def test_shorten_cuts_at_a_word_with_an_ellipsis(text: str, limit: int, short: str) -> None:
    assert page_facts.shorten(text, limit) == short
    assert len(page_facts.shorten(text, limit)) <= limit
