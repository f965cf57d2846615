"""GET /metrics: Tocsin's own figures for a Prometheus scraper (OpenMetrics text), from the
insights totals: one Query. A key with the `metrics:read` scope, sent as a bearer token."""

from __future__ import annotations

from chalice.app import Response

from chalicelib.api.credential_kinds import API_KEY_OR_SESSION
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import CREDENTIAL_BUCKET, Call, OperationGroup
from chalicelib.insights import openmetrics, reading

api = OperationGroup(__name__, tag="insights")


@api.raw(
    "GET",
    "/metrics",
    operation_id="getMetrics",
    summary="Counters and histograms for Prometheus (OpenMetrics text)",
    credential=API_KEY_OR_SESSION,
    bucket=CREDENTIAL_BUCKET,
    family=ErrorFamily.WEBHOOK,  # the bare {success: false, error} body, as every route outside /api/v1
    scope="metrics:read",
    content_type="text/plain",  # also application/openmetrics-text when asked (client generators read text/plain)
    errors=(401, 403),
    description="The organization's incidents opened, acknowledged, resolved and escalated by service and "
    "severity; time to acknowledge and to resolve (histograms, seconds); pages sent and failed by channel; "
    "inbound events by outcome. All-time counters (a reopen takes a resolution back, which a scraper reads as a "
    "counter reset). OpenMetrics 1.0 when Accept asks for application/openmetrics-text, else the same text "
    "as Prometheus text 0.0.4. Docs: docs/INSIGHTS.md.",
)
def metrics(call: Call) -> Response:
    accept = call.header("Accept") or ""
    content_type = (
        openmetrics.CONTENT_TYPE if "application/openmetrics-text" in accept else openmetrics.PROMETHEUS_CONTENT_TYPE
    )
    body = openmetrics.render(reading.totals(call.principal.organization_id))
    return Response(body=body, status_code=200, headers={"Content-Type": content_type, "Cache-Control": "no-store"})
