"""GET /metrics: a key with metrics:read reads the organization's counters and histograms as
OpenMetrics text, checked by a strict reader against a history counted by hand; other
credentials are refused in the API's envelope."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from tests.conftest import NOW, Org
from tests.kit import factories as make
from tests.kit.api import call, session_jwt
from tests.service.insights_history import acknowledge, feed_rollups, move
from tests.unit.openmetrics_parser import parse, value


def scrape(client: Any, key: str, accept: str | None = None) -> Any:
    """The text answer (the kit's `call` reads JSON)."""
    headers = {"Authorization": f"Bearer {key}", **({"Accept": accept} if accept else {})}
    return client.http.get("/metrics", headers=headers)


@pytest.fixture(autouse=True)
def frozen_clock() -> Iterator[None]:
    with clock.frozen(NOW):
        yield


def test_the_counters_and_histograms_match_the_history(client: Any, org: Org) -> None:
    ana = make.person(org, "Ana")
    svc = make.service(org, "Checkout")
    opened = NOW - timedelta(hours=3)
    for ack_after, resolve_after in ((45, 3000), (200, None), (None, None)):
        made = make.incident(org, svc, severity="SEV2", now=opened)
        if ack_after is not None:
            acknowledge(org.organization_id, made.incident_number, ana, opened + timedelta(seconds=ack_after))
        if resolve_after is not None:
            move(org.organization_id, made.incident_number, "resolved", ana, opened + timedelta(seconds=resolve_after))
    feed_rollups(times=2)
    key = make.api_key(org, "metrics:read")
    reply = scrape(client, key, "application/openmetrics-text")
    assert reply.status_code == 200, reply.body
    assert reply.headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0")
    families = parse(reply.body.decode())
    labels = {"service": svc.service_key, "severity": "SEV2"}
    assert value(families, "tocsin_incidents_opened_total", **labels) == 3
    assert value(families, "tocsin_incidents_acknowledged_total", **labels) == 2
    assert value(families, "tocsin_incidents_resolved_total", **labels) == 1
    ack = "tocsin_incident_time_to_acknowledge_seconds"
    assert [value(families, f"{ack}_bucket", **labels, le=le) for le in ("30.0", "60.0", "120.0", "300.0")] == [
        0, 1, 1, 2,
    ]  # fmt: skip
    assert (value(families, f"{ack}_count", **labels), value(families, f"{ack}_sum", **labels)) == (2, 245)
    resolve = "tocsin_incident_time_to_resolve_seconds"
    assert value(families, f"{resolve}_bucket", **labels, le="3600.0") == 1
    plain = scrape(client, key)
    assert plain.status_code == 200 and plain.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    assert plain.body == reply.body


def test_only_a_credential_with_metrics_read_may_read(client: Any, org: Org) -> None:
    assert call(client, "GET", "/metrics").status == 401
    for refused in (org.readonly_key, make.api_key(org, "insights:read")):
        reply = call(client, "GET", "/metrics", refused)
        assert reply.status == 403 and reply.json["error"]["code"] == "FORBIDDEN"
    viewer = make.person(org, "Vi", role="viewer")
    reply = call(client, "GET", "/metrics", session_jwt(org.organization_id, viewer.user_id, "viewer"))
    assert reply.status == 403
    assert scrape(client, org.owner_key).status_code == 200


def test_prometheus_clients_own_parsers_read_both_formats(client: Any, org: Org) -> None:
    """prometheus_client (the Prometheus project's Python client) judges the text: its strict
    OpenMetrics parser and its 0.0.4 text parser read the same figures."""
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as read_openmetrics
    from prometheus_client.parser import text_string_to_metric_families as read_text

    ana = make.person(org, "Ana")
    svc = make.service(org, "Checkout")
    made = make.incident(org, svc, severity="SEV2", now=NOW - timedelta(hours=1))
    acknowledge(org.organization_id, made.incident_number, ana, NOW - timedelta(minutes=59))
    feed_rollups(times=2)
    key = make.api_key(org, "metrics:read")

    def samples(families: Any) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        return {(s.name, tuple(sorted(s.labels.items()))): s.value for family in families for s in family.samples}

    strict = samples(read_openmetrics(scrape(client, key, "application/openmetrics-text").body.decode()))
    classic = samples(read_text(scrape(client, key).body.decode()))
    labels = (("service", svc.service_key), ("severity", "SEV2"))
    assert strict[("tocsin_incidents_opened_total", labels)] == 1
    assert strict[("tocsin_incident_time_to_acknowledge_seconds_count", labels)] == 1
    assert strict[("tocsin_incident_time_to_acknowledge_seconds_sum", labels)] == 60
    assert {name: v for name, v in classic.items() if name in strict} == {
        name: v for name, v in strict.items() if name in classic
    }
    assert ("tocsin_incidents_opened_total", labels) in classic
