"""The /metrics text as a table: every family, escaping, histogram buckets from the rollups' own,
read back by a strict OpenMetrics reader; and the reader refusing what Prometheus would refuse."""

from __future__ import annotations

import pytest

from chalicelib.insights import histogram, openmetrics
from tests.unit.openmetrics_parser import parse, value


def hist(prefix: str, *durations: int) -> dict[str, int]:
    found: dict[str, int] = {}
    for seconds in durations:
        name = f"{prefix}{histogram.bucket_of(seconds)}"
        found[name] = found.get(name, 0) + 1
    return found


TOTALS = {
    "service_severity#svc_a|SEV1": {
        "opened": 3,
        "acked": 2,
        "ack_s": 360,
        **hist("ah", 60, 300),
        "resolved": 1,
        "res_s": 7200,
        **hist("rh", 7200),
    },
    'service_severity#svc_"b"|SEV2': {"opened": 1},
    "channel#sms": {"pages": 4, "pages_failed": 1},
    "inbound#created": {"events": 3},
    "inbound#dropped": {"events": 2},
}


def test_every_family_reads_back_with_its_values() -> None:
    families = parse(openmetrics.render(TOTALS))
    assert value(families, "tocsin_incidents_opened_total", service="svc_a", severity="SEV1") == 3
    assert value(families, "tocsin_incidents_opened_total", service='svc_"b"', severity="SEV2") == 1
    assert value(families, "tocsin_incidents_acknowledged_total", service="svc_a", severity="SEV1") == 2
    assert value(families, "tocsin_incidents_resolved_total", service="svc_a", severity="SEV1") == 1
    assert value(families, "tocsin_notifications_sent_total", channel="sms") == 4
    assert value(families, "tocsin_notifications_failed_total", channel="sms") == 1
    assert value(families, "tocsin_inbound_events_total", outcome="dropped") == 2
    ack = "tocsin_incident_time_to_acknowledge_seconds"
    labels = {"service": "svc_a", "severity": "SEV1"}
    assert value(families, f"{ack}_bucket", **labels, le="30.0") == 0
    assert value(families, f"{ack}_bucket", **labels, le="60.0") == 1
    assert value(families, f"{ack}_bucket", **labels, le="300.0") == 2
    assert value(families, f"{ack}_bucket", **labels, le="+Inf") == 2
    assert (value(families, f"{ack}_count", **labels), value(families, f"{ack}_sum", **labels)) == (2, 360)
    assert families[ack].type == "histogram" and families["tocsin_incidents_opened"].type == "counter"


def test_no_totals_is_still_a_valid_exposition() -> None:
    families = parse(openmetrics.render({}))
    assert {family.type for family in families.values()} == {"counter", "histogram"}
    assert all(not family.samples for family in families.values())


def test_label_values_are_escaped() -> None:
    assert openmetrics.escape('a\\b"c\nd') == 'a\\\\b\\"c\\nd'


@pytest.mark.parametrize(
    "text",
    [
        "x_total 1\n# EOF\n",  # no TYPE
        "# TYPE x counter\nx_total 1\n",  # no EOF
        "# TYPE x counter\nx_total -1\n# EOF\n",
        "# TYPE x counter\nx_bucket 1\n# EOF\n",
        '# TYPE x counter\nx_total{a="b\nc"} 1\n# EOF\n',
        '# TYPE h histogram\nh_bucket{le="1.0"} 2\nh_bucket{le="+Inf"} 1\nh_count 1\nh_sum 0\n# EOF\n',
        '# TYPE h histogram\nh_bucket{le="1.0"} 1\nh_count 1\nh_sum 0\n# EOF\n',
        "# TYPE x counter\nx_total 1\n# TYPE y counter\n# TYPE x counter\n# EOF\n",
    ],
)
def test_the_reader_refuses_what_prometheus_refuses(text: str) -> None:
    with pytest.raises((ValueError, KeyError)):
        parse(text)
