"""Custom webhook payloads: the signed schema and the legacy schema, told apart by shape.

Signed schema (spec "Custom webhook payload"): title, service_id, description, severity, status,
source_url, dedup_key, metadata. Legacy schema: title, description, severity, service,
affected_services, customer_impact, tags; other fields are reference metadata.

Shape detection (`detect_schema`): any of service_id, dedup_key, status, metadata, source_url
present -> signed; else legacy. The severity's vocabulary plays no part: both shapes read it
through chalicelib.severity's one table (SEV0-SEV4, Critical..Pre-emptive, critical/error/
warning/info, P1-P5), so routing (service_id) and dedup (dedup_key) never depend on it. Legacy
fields sent with a signed body are kept as they are on a legacy one (labels).

Nothing about a field's shape refuses the alert (chalicelib.integration.parsers._lenient): fields
the schema does not define are kept as details, wrong types are converted or moved to details,
values over a limit are cut, and each is a warning in the answer. Refused (400): no usable title,
a service_id that is no service id or key (cutting or guessing would route elsewhere), a
dedup_key over 255 characters (cutting it would merge distinct alerts). docs/INTAKE.md has the
rules field by field. Every path of the custom webhook (the legacy /v1/incidents one included)
detects the shape the same way, so one body gets one answer wherever it is sent.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final, Literal

from chalicelib.integration.normalized import Action, NormalizedAlert, StatusHint, stringify
from chalicelib.integration.parsers._common import http_url, load_json_object, obj, service_hint
from chalicelib.integration.parsers._lenient import Intake
from chalicelib.severity import Severity

Schema = Literal["signed", "legacy"]

TITLE_MAX: Final = 500
SERVICE_ID_MAX: Final = 50
DESCRIPTION_MAX: Final = 5000
LEGACY_DESCRIPTION_MAX: Final = 10_000
DEDUP_KEY_MAX: Final = 255
METADATA_MAX_KEYS: Final = 10
LEGACY_EXTRA_MAX: Final = 25
INCIDENT_TITLE_MAX: Final = 200
SIGNED_FIELDS: Final = frozenset(
    {"title", "service_id", "description", "severity", "status", "source_url", "dedup_key", "metadata"}
)
SIGNED_MARKERS: Final = frozenset({"service_id", "dedup_key", "status", "metadata", "source_url"})
LEGACY_MARKERS: Final = frozenset({"service", "affected_services", "customer_impact", "tags"})
LEGACY_FIELDS: Final = frozenset({"title", "description", "severity"}) | LEGACY_MARKERS
LEGACY_DEFAULT_SEVERITY: Final[Severity] = "SEV2"
CUSTOM_STATUSES: Final[tuple[StatusHint, ...]] = ("new", "investigating", "resolved")
_SERVICE_ID_RE: Final = re.compile(r"(?i:SER)-[0-9]{5,}|svc_[a-z0-9]{10}")


def parse_custom(body: bytes | str, *, schema: Schema | None = None) -> NormalizedAlert:
    """Parse a custom webhook body; `schema` forces a schema."""
    payload = load_json_object(body)
    chosen = schema or detect_schema(payload)
    return parse_legacy_payload(payload) if chosen == "legacy" else parse_signed_payload(payload)


def detect_schema(payload: dict[str, Any]) -> Schema:
    return "signed" if payload.keys() & SIGNED_MARKERS else "legacy"


# --- signed schema --------------------------------------------------------------------------------


def parse_signed_payload(payload: dict[str, Any]) -> NormalizedAlert:
    intake = Intake()
    title = intake.title(payload, max_len=INCIDENT_TITLE_MAX)
    service_id = _service_id(payload.get("service_id"), intake)
    description = intake.text(payload, "description", max_len=DESCRIPTION_MAX)
    severity = intake.severity(payload)
    status = _status(payload.get("status"), intake)
    source_url = intake.url(payload, "source_url")
    dedup_key = _dedup_key(payload.get("dedup_key"), intake)
    metadata = _metadata(payload.get("metadata"), intake)
    runbook_url = http_url(metadata.get("runbook_url"))
    legacy, legacy_hint = _legacy_labels(payload, intake, always_impact=False)
    metadata = legacy | metadata
    intake.unknown(payload, SIGNED_FIELDS | LEGACY_MARKERS, "custom webhook payload")
    intake.check()
    action: Action = "resolve" if status == "resolved" else "trigger"
    return NormalizedAlert(
        source="custom",
        action=action,
        title=title,
        description=description,
        severity=severity,
        dedup_key=dedup_key,
        source_url=source_url,
        service_hint=service_id or legacy_hint,
        status_hint=status,
        metadata=metadata,
        summary=f"Custom webhook: {status}" + (f" ({severity})" if severity else ""),
        raw_details={"status": status, "metadata": metadata} if metadata else {"status": status},
        details=intake.details,
        warnings=tuple(intake.warnings),
        runbook_url=runbook_url,
    )


def _service_id(value: object, intake: Intake) -> str | None:
    """The service the body names (a SER- id in any case, upper-cased). Refused when it names none
    we could look up: routing the alert elsewhere would page the wrong people (docs/INTAKE.md)."""
    if value is None:
        return None
    text = json.dumps(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or len(text) > SERVICE_ID_MAX or not _SERVICE_ID_RE.fullmatch(text):
        intake.refuse(
            "'service_id' must be a service id like SER-00001 (SER- and at least 5 digits) or a service key "
            f"(svc_...), at most {SERVICE_ID_MAX} characters."
        )
        return None
    return text.upper() if text[:4].upper() == "SER-" else text


def _status(value: object, intake: Intake) -> StatusHint:
    text = intake.scalar_text("status", value)
    if text is None:
        return "new"
    found = text.strip().lower()
    for status in CUSTOM_STATUSES:
        if found == status:
            return status
    intake.move("status", value, "must be new, investigating or resolved; read as new")
    return "new"


def _dedup_key(value: object, intake: Intake) -> str | None:
    text = intake.scalar_text("dedup_key", value)
    if text is None:
        return None
    if len(text) > DEDUP_KEY_MAX:
        # Cutting it would merge distinct alerts that share their first 255 characters.
        intake.refuse(f"'dedup_key' must be at most {DEDUP_KEY_MAX} characters (got {len(text)}); it is not cut.")
        return None
    if not text.strip():
        intake.warn("'dedup_key' is blank; ignored, so every delivery opens a new alert.")
        return None
    return text


def _metadata(value: object, intake: Intake) -> dict[str, str]:
    """String pairs (labels), at most 10; numbers and booleans read as text; the rest to details."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        intake.move("metadata", value, "must be an object of string values")
        return {}
    kept: dict[str, str] = {}
    moved: dict[str, Any] = {}
    converted: list[str] = []
    for key, item in value.items():
        if not key.strip() or len(kept) >= METADATA_MAX_KEYS:
            moved[key] = item
        elif isinstance(item, str):
            kept[key] = item
        elif isinstance(item, bool | int | float):
            kept[key] = json.dumps(item)
            converted.append(key)
        else:
            moved[key] = item
    if converted:
        intake.warn(f"'metadata' values must be strings; read as text: {', '.join(repr(k) for k in converted[:10])}.")
    if moved:
        intake.details["metadata"] = moved
        intake.warn(
            f"'metadata' holds at most {METADATA_MAX_KEYS} text values under non-blank keys; "
            f"{len(moved)} other entr{'y' if len(moved) == 1 else 'ies'} kept in details."
        )
    return kept


def _legacy_labels(
    payload: dict[str, Any], intake: Intake, *, always_impact: bool
) -> tuple[dict[str, str], str | None]:
    """The legacy fields as reference metadata (labels): service, affected_services, customer_impact,
    tags; and the service they name (tags.service_id, service, the first affected service)."""
    metadata: dict[str, str] = {}
    impact = payload.get("customer_impact")
    if isinstance(impact, str) and impact.strip().lower() in ("true", "false"):
        intake.warn("'customer_impact' was a string; read as a boolean.")
        impact = impact.strip().lower() == "true"
    elif impact is not None and not isinstance(impact, bool):
        intake.move("customer_impact", impact, "must be true or false")
        impact = None
    if impact is not None or always_impact:
        metadata["customer_impact"] = "true" if impact else "false"
    service = intake.text(payload, "service")
    if service:
        metadata["service"] = service
    affected = _affected(payload.get("affected_services"), intake)
    if affected:
        metadata["affected_services"] = ", ".join(affected)
    tags = payload.get("tags")
    if tags is not None and not isinstance(tags, dict):
        intake.move("tags", tags, "must be an object of key-value pairs")
        tags = None
    tags = tags or {}
    for key, tag in list(tags.items())[:LEGACY_EXTRA_MAX]:
        metadata[f"tags.{key}"] = stringify(tag)
    return metadata, service_hint(tags.get("service_id"), service, *affected[:1])


def _affected(value: object, intake: Intake) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        intake.warn("'affected_services' was a string; read as a list of one.")
        return [value.strip()] if value.strip() else []
    if not isinstance(value, list):
        intake.move("affected_services", value, "must be an array of strings")
        return []
    names = [item.strip() for item in value if isinstance(item, str) and item.strip()]
    if any(not isinstance(item, str) for item in value):
        intake.move("affected_services", value, "must hold strings only; its strings are kept as a label too")
    return names


# --- legacy schema --------------------------------------------------------------------------------


def parse_legacy_payload(payload: dict[str, Any]) -> NormalizedAlert:
    intake = Intake()
    title = intake.title(payload, max_len=INCIDENT_TITLE_MAX)
    description = intake.text(payload, "description", max_len=LEGACY_DESCRIPTION_MAX)
    severity = intake.severity(payload, default=LEGACY_DEFAULT_SEVERITY)
    metadata, hint = _legacy_labels(payload, intake, always_impact=True)
    extras = {k: v for k, v in payload.items() if k not in LEGACY_FIELDS}
    for key, value in list(extras.items())[:LEGACY_EXTRA_MAX]:
        metadata.setdefault(key, stringify(value))  # the spec's reference metadata
    intake.unknown(payload, LEGACY_FIELDS, "legacy payload")
    intake.check()
    tags = obj(payload.get("tags"))
    impact = metadata.get("customer_impact") == "true"
    return NormalizedAlert(
        source="legacy",
        action="trigger",
        title=title,
        description=description,
        severity=severity,
        service_hint=hint,
        metadata=metadata,
        summary=f"Legacy webhook alert ({severity or 'service default'})" + (" with customer impact" if impact else ""),
        raw_details={k: v for k, v in payload.items() if k not in ("title", "description")},
        details=intake.details,
        warnings=tuple(intake.warnings),
        runbook_url=http_url(payload.get("runbook_url")) or http_url(tags.get("runbook_url")),
    )
