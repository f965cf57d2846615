"""Prometheus Alertmanager webhooks (version "4") and Grafana alerting webhooks (version "1").

One delivery describes a whole alert group, re-sent on every change and repeat interval, so it
maps to one incident keyed by `groupKey`: status firing -> trigger, resolved -> resolve. Severity
comes from `commonLabels.severity`, else the first firing alert's `labels.severity`, read through
chalicelib.severity's one table with Alertmanager's overrides (critical SEV0, high SEV1, warning
SEV2, info SEV3, none/low SEV4); a word the table does not know leaves the service default.
Details: the first alert's labels and annotations (over the common ones) and the other alerts' (at
most 10); `runbook_url` is that annotation; the title is the `summary` annotation (common, else the
first alert's), else the alert name and group labels.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from chalicelib.errors import InvalidPayload
from chalicelib.integration.normalized import Action, NormalizedAlert
from chalicelib.integration.parsers._common import (
    compact,
    first_text,
    http_url,
    iso_time,
    json_type,
    load_json_object,
    mapped,
    obj,
    service_hint,
    text,
)

STATUS_ACTION: Final[Mapping[str, Action]] = {"firing": "trigger", "resolved": "resolve"}
GRAFANA_STATE_STATUS: Final[Mapping[str, str]] = {"alerting": "firing", "ok": "resolved"}
ALERTS_LISTED: Final = 20
LABELS_IN_METADATA: Final = 15
OTHER_ALERTS_IN_DETAILS: Final = 10


def parse_alertmanager(body: bytes | str) -> NormalizedAlert:
    payload = load_json_object(body)
    problems: list[str] = []
    version = text(payload.get("version"))
    grafana = version == "1" or "orgId" in payload
    status = (text(payload.get("status")) or "").lower()
    if not status and grafana:
        status = GRAFANA_STATE_STATUS.get((text(payload.get("state")) or "").lower(), "")
    if status not in STATUS_ACTION:
        problems.append("'status' must be firing or resolved.")
    alerts = payload.get("alerts")
    if not isinstance(alerts, list):
        problems.append(f"'alerts' must be an array, not {json_type(alerts)}.")
        alerts = []
    bad = [i for i, a in enumerate(alerts) if not isinstance(a, dict)]
    if bad:
        problems.append(f"'alerts[{bad[0]}]' must be an object.")
    for name in ("groupLabels", "commonLabels", "commonAnnotations"):
        if payload.get(name) is not None and not isinstance(payload.get(name), dict):
            problems.append(f"'{name}' must be an object, not {json_type(payload.get(name))}.")
    if problems:
        raise InvalidPayload.from_problems(problems)

    group_labels, common_labels = obj(payload.get("groupLabels")), obj(payload.get("commonLabels"))
    common_annotations = obj(payload.get("commonAnnotations"))
    firing = [a for a in alerts if (text(a.get("status")) or "").lower() == "firing"]
    resolved = [a for a in alerts if (text(a.get("status")) or "").lower() == "resolved"]
    first = firing[0] if firing else alerts[0] if alerts else {}
    first_labels, first_annotations = obj(first.get("labels")), obj(first.get("annotations"))
    severity = mapped("alertmanager", common_labels.get("severity")) or mapped(
        "alertmanager", first_labels.get("severity")
    )
    hint = service_hint(
        common_labels.get("service_id"),
        obj(first.get("labels")).get("service_id"),
        *(obj(a.get("labels")).get("service_id") for a in alerts[:50]),
    )
    alertname = first_text(common_labels.get("alertname"), obj(first.get("labels")).get("alertname"))
    title = first_text(
        common_annotations.get("summary"),
        first_annotations.get("summary"),
        payload.get("title") if grafana else None,
        _group_title(alertname, group_labels),
    )
    summary = f"{len(firing)} firing, {len(resolved)} resolved"
    truncated = payload.get("truncatedAlerts")
    if isinstance(truncated, int) and not isinstance(truncated, bool) and truncated > 0:
        summary += f" ({truncated} more truncated)"
    group_key = text(payload.get("groupKey"))
    if group_key is None and (group_labels or payload.get("receiver")):
        group_key = f"{text(payload.get('receiver')) or ''}:{json.dumps(group_labels, sort_keys=True)}"
    generator = next((u for u in (http_url(a.get("generatorURL")) for a in alerts[:50]) if u), None)
    metadata: dict[str, object] = {
        "flavor": "grafana" if grafana else "alertmanager",
        "version": version,
        "receiver": text(payload.get("receiver")),
        "alertname": alertname,
        "firing": str(len(firing)),
        "resolved": str(len(resolved)),
        "truncated_alerts": text(truncated),
        "org_id": text(payload.get("orgId")),
        **{f"labels.{k}": text(v) for k, v in list(common_labels.items())[:LABELS_IN_METADATA]},
    }
    return NormalizedAlert(
        source="alertmanager",
        action=STATUS_ACTION[status],
        title=title or "",
        description=_description(alerts) or text(payload.get("message")),
        severity=severity,
        dedup_key=group_key,
        source_url=http_url(payload.get("externalURL")) or generator,
        service_hint=hint,
        metadata=compact(metadata),
        summary=summary,
        raw_details={k: v for k, v in payload.items() if k not in ("alerts", "message")} | {"alerts": alerts[:10]},
        occurred_at=_earliest(firing),
        details=_details(alerts, first, common_labels, common_annotations),
        runbook_url=http_url(common_annotations.get("runbook_url")) or http_url(first_annotations.get("runbook_url")),
    )


def _details(
    alerts: list[dict[str, Any]],
    first: dict[str, Any],
    common_labels: Mapping[str, Any],
    common_annotations: Mapping[str, Any],
) -> dict[str, Any]:
    """What a responder reads beyond the title: the labels and annotations Alertmanager carried."""
    details: dict[str, Any] = {
        "labels": {**common_labels, **obj(first.get("labels"))},
        "annotations": {**common_annotations, **obj(first.get("annotations"))},
    }
    others = [alert for alert in alerts if alert is not first][:OTHER_ALERTS_IN_DETAILS]
    if others:
        details["other_alerts"] = [
            {key: alert[key] for key in ("status", "labels", "annotations", "startsAt") if key in alert}
            for alert in others
        ]
    return {key: value for key, value in details.items() if value}


def _group_title(alertname: str | None, group_labels: Mapping[str, Any]) -> str | None:
    others = sorted((k, text(v)) for k, v in group_labels.items() if k != "alertname" and text(v))
    label_text = ", ".join(f"{k}={v}" for k, v in others)
    name = alertname or text(group_labels.get("alertname"))
    if name and label_text:
        return f"{name} ({label_text})"
    return name or label_text or None


def _description(alerts: list[dict[str, Any]]) -> str | None:
    lines = []
    for alert in alerts[:ALERTS_LISTED]:
        labels, annotations = obj(alert.get("labels")), obj(alert.get("annotations"))
        name = text(labels.get("alertname")) or text(alert.get("fingerprint")) or "alert"
        instance = text(labels.get("instance"))
        detail = first_text(annotations.get("description"), annotations.get("summary"))
        status = (text(alert.get("status")) or "unknown").lower()
        line = f"[{status}] {name}" + (f" {instance}" if instance else "")
        lines.append(f"{line}: {detail}" if detail else line)
    if len(alerts) > ALERTS_LISTED:
        lines.append(f"... and {len(alerts) - ALERTS_LISTED} more")
    return "\n".join(lines) or None


def _earliest(alerts: list[dict[str, Any]]) -> datetime | None:
    times = [t for t in (iso_time(a.get("startsAt")) for a in alerts) if t]
    return min(times) if times else None
