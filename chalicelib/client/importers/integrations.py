"""Which Tocsin integration type each vendor integration becomes, and what its sender must change
at cut-over. Pure tables.

A sender keeps its payload unchanged when Tocsin speaks its vendor's API: PagerDuty Events v2
(`POST /v2/enqueue`, integration type `pagerduty`) and Opsgenie's Alert API (`/v2/alerts`, type
`opsgenie`, when the server has it). Every other sender switches to a Tocsin webhook URL and
Tocsin's format for it (Alertmanager, CloudWatch through SNS, New Relic, Sentry, or the custom
webhook)."""

from __future__ import annotations

from dataclasses import dataclass

PAGERDUTY_EVENTS = frozenset({"events_api_v2_inbound_integration", "generic_events_api_inbound_integration"})
PAGERDUTY_EMAIL = frozenset({"generic_email_inbound_integration", "email_inbound_integration"})
# Opsgenie integrations whose senders speak its Alert API (an API key, POST /v2/alerts).
OPSGENIE_ALERT_API = frozenset({"API", "Prometheus", "Grafana", "GrafanaV2", "Zabbix", "Marid", "OEC", "Terraform"})
# The closest native Tocsin type, by the words of the vendor's type or vendor name.
NATIVE_BY_WORD: tuple[tuple[str, str], ...] = (
    ("prometheus", "alertmanager"),
    ("alertmanager", "alertmanager"),
    ("grafana", "alertmanager"),
    ("cloudwatch", "cloudwatch"),
    ("amazonsns", "cloudwatch"),
    ("amazon sns", "cloudwatch"),
    ("newrelic", "newrelic"),
    ("new relic", "newrelic"),
    ("sentry", "sentry"),
)
SENDER_STEPS: dict[str, str] = {
    "pagerduty": "Events API v2 at {base}/v2/enqueue with this routing key (the payload stays as it is)",
    "opsgenie": "Opsgenie's API URL set to {base} with this key as its GenieKey (the payload stays as it is; "
    "heartbeats ping {base}/v2/heartbeats/<name>/ping)",
    "alertmanager": "Alertmanager / Grafana: a webhook receiver (webhook_configs) with this URL",
    "cloudwatch": "subscribe the SNS topic to this URL (HTTPS); Tocsin confirms the subscription",
    "newrelic": "New Relic: a webhook destination with this URL",
    "sentry": "Sentry: an internal integration's webhook URL; set the client secret on the integration",
    "custom": "POST Tocsin's custom JSON (docs/INTAKE.md) to this URL: the sender's payload must change",
}


@dataclass(frozen=True)
class Mapped:
    """A vendor integration's Tocsin type, or None (skipped), and why, for the notes and the sheet."""

    type: str | None
    keeps_payload: bool
    reason: str = ""  # set when the type is only the nearest, or when skipped
    nearest: str = ""


def _native(words: str) -> str | None:
    folded = words.casefold()
    return next((kind for word, kind in NATIVE_BY_WORD if word in folded), None)


def pagerduty(integration_type: str, vendor_name: str) -> Mapped:
    """A PagerDuty service integration (its `type` and its vendor's name)."""
    if integration_type in PAGERDUTY_EVENTS:
        reason = ""
        if integration_type == "generic_events_api_inbound_integration":
            reason = "Events API v1: Tocsin answers as Events API v2 only; the sender must send v2 events"
        return Mapped("pagerduty", integration_type == "events_api_v2_inbound_integration", reason)
    if integration_type in PAGERDUTY_EMAIL or "email" in integration_type:
        return Mapped(
            None,
            False,
            "Tocsin takes no alerts by email",
            "a custom webhook integration, if the sender can POST JSON",
        )
    if integration_type == "aws_cloudwatch_inbound_integration":
        return Mapped("cloudwatch", False)
    native = _native(f"{integration_type} {vendor_name}")
    if native is not None:
        return Mapped(native, False)
    return Mapped(
        "custom",
        False,
        f"{vendor_name or integration_type} has no Tocsin integration of its own: a custom webhook, whose payload "
        "the sender must produce",
        "a custom webhook",
    )


def opsgenie(integration_type: str, types_known: frozenset[str]) -> Mapped:
    """An Opsgenie integration by its type; `types_known`: the server's integration types."""
    if integration_type in ("Email", "IncomingCall") or "Email" in integration_type:
        return Mapped(None, False, "Tocsin takes no alerts by email or phone call", "a custom webhook integration")
    if integration_type == "Heartbeat":
        return Mapped(None, False, "heartbeats are imported as Tocsin heartbeats, each with its own ping URL")
    if integration_type in OPSGENIE_ALERT_API:
        if "opsgenie" in types_known:
            return Mapped("opsgenie", True)
        fallback = _native(integration_type) or "custom"
        return Mapped(
            fallback,
            False,
            "this Tocsin has no Opsgenie drop-in (integration type opsgenie) yet: the sender must switch to "
            f"the {fallback} format",
            "the Opsgenie drop-in once the server has it",
        )
    native = _native(integration_type)
    if native is not None:
        return Mapped(native, False)
    if integration_type == "Webhook":
        return Mapped("custom", False)
    return Mapped(
        "custom",
        False,
        f"{integration_type} has no Tocsin integration of its own: a custom webhook, whose payload the sender must "
        "produce",
        "a custom webhook",
    )
