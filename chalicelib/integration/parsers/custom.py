"""Custom webhook payloads: the signed schema and the legacy schema, told apart by shape.

Signed schema (spec "Custom webhook payload"): title, service_id, description, severity, status,
source_url, dedup_key, metadata; unknown fields are refused. Legacy schema: title, description,
severity (Critical/High/Medium/Low/Pre-emptive), service, affected_services, customer_impact, tags;
any other field is kept as reference metadata.

Shape detection (`detect_schema`):
1. a severity that is a legacy word -> legacy (the signed schema would refuse it anyway);
2. signed markers (service_id, dedup_key, status, metadata, source_url) without legacy markers
   (service, affected_services, customer_impact, tags) -> signed; legacy markers alone -> legacy;
3. both -> signed when service_id is present (its errors name the stray legacy fields), else legacy;
4. neither (only title/description/severity) -> legacy (a title alone is a valid legacy payload:
   the integration's default service, severity Medium = SEV2), unless the severity is a SEVn
   name, which only the signed schema knows (its error then asks for service_id).
Every path of the custom webhook (the legacy /v1/incidents one included) detects the shape the
same way, so one body gets one answer wherever it is sent.

The signed schema's `service_id` is a service id (SER-00001) or a service key (svc_ and 10
lower-case letters or digits), at most 50 characters.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal

from chalicelib.errors import InvalidPayload
from chalicelib.integration.normalized import Action, NormalizedAlert, StatusHint, stringify
from chalicelib.integration.parsers._common import http_url, json_type, load_json_object, service_hint
from chalicelib.severity import SEVERITIES, Severity

Schema = Literal["signed", "legacy"]

TITLE_MAX: Final = 500
SERVICE_ID_MAX: Final = 50
DESCRIPTION_MAX: Final = 5000
DEDUP_KEY_MAX: Final = 255
METADATA_MAX_KEYS: Final = 10
LEGACY_EXTRA_MAX: Final = 25
SIGNED_FIELDS: Final = frozenset(
    {"title", "service_id", "description", "severity", "status", "source_url", "dedup_key", "metadata"}
)
SIGNED_MARKERS: Final = frozenset({"service_id", "dedup_key", "status", "metadata", "source_url"})
LEGACY_MARKERS: Final = frozenset({"service", "affected_services", "customer_impact", "tags"})
LEGACY_FIELDS: Final = frozenset({"title", "description", "severity"}) | LEGACY_MARKERS
LEGACY_SEVERITIES: Final[dict[str, Severity]] = {
    "critical": "SEV0",
    "high": "SEV1",
    "medium": "SEV2",
    "low": "SEV3",
    "preemptive": "SEV4",
}
LEGACY_DEFAULT_SEVERITY: Final[Severity] = "SEV2"
CUSTOM_STATUSES: Final[tuple[StatusHint, ...]] = ("new", "investigating", "resolved")
_SERVICE_ID_RE: Final = re.compile(r"SER-[0-9]{5,}|svc_[a-z0-9]{10}")


def parse_custom(body: bytes | str, *, schema: Schema | None = None) -> NormalizedAlert:
    """Parse a custom webhook body; `schema` forces a schema (the legacy /v1/incidents path)."""
    payload = load_json_object(body)
    chosen = schema or detect_schema(payload)
    return parse_legacy_payload(payload) if chosen == "legacy" else parse_signed_payload(payload)


def detect_schema(payload: dict[str, Any]) -> Schema:
    if _legacy_word(payload.get("severity")) is not None:
        return "legacy"
    keys = set(payload)
    signed, legacy = bool(keys & SIGNED_MARKERS), bool(keys & LEGACY_MARKERS)
    if legacy and (not signed or "service_id" not in keys):
        return "legacy"
    if not signed and not legacy and _canonical_severity(payload.get("severity")) is None:
        return "legacy"
    return "signed"


def _legacy_word(value: object) -> Severity | None:
    if not isinstance(value, str):
        return None
    key = re.sub(r"[\s_-]+", "", value).lower()
    return LEGACY_SEVERITIES.get(key)


def _canonical_severity(value: object) -> Severity | None:
    if isinstance(value, str):
        candidate = value.strip().upper()
        for severity in SEVERITIES:
            if candidate == severity:
                return severity
    return None


def _string(
    payload: dict[str, Any], name: str, problems: list[str], *, required: bool, max_len: int | None
) -> str | None:
    value = payload.get(name)
    if value is None:
        if required:
            problems.append(f"'{name}' is required.")
        return None
    if not isinstance(value, str):
        problems.append(f"'{name}' must be a string, not {json_type(value)}.")
        return None
    if required and not value.strip():
        problems.append(f"'{name}' must not be blank.")
        return None
    if max_len is not None and len(value) > max_len:
        problems.append(f"'{name}' must be at most {max_len} characters (got {len(value)}).")
        return None
    return value


# --- signed schema --------------------------------------------------------------------------------


def parse_signed_payload(payload: dict[str, Any]) -> NormalizedAlert:
    problems: list[str] = []
    unknown = sorted(set(payload) - SIGNED_FIELDS)
    if unknown:
        names = ", ".join(f"'{name}'" for name in unknown[:20])
        problems.append(f"Unknown field(s) {names}; allowed: {', '.join(sorted(SIGNED_FIELDS))}.")
    title = _string(payload, "title", problems, required=True, max_len=TITLE_MAX)
    service_id = _string(payload, "service_id", problems, required=True, max_len=SERVICE_ID_MAX)
    if service_id is not None and not _SERVICE_ID_RE.fullmatch(service_id):
        problems.append(
            "'service_id' must be a service id like SER-00001 (SER- and at least 5 digits) or a service key (svc_...)."
        )
        service_id = None
    description = _string(payload, "description", problems, required=False, max_len=DESCRIPTION_MAX)
    severity: Severity | None = None
    if payload.get("severity") is not None:
        severity = _canonical_severity(payload["severity"])
        if severity is None:
            problems.append(f"'severity' must be one of {', '.join(SEVERITIES)}.")
    status: StatusHint = "new"
    raw_status = payload.get("status")
    if raw_status is not None:
        found = raw_status.strip().lower() if isinstance(raw_status, str) else None
        if found not in CUSTOM_STATUSES:
            problems.append(f"'status' must be one of {', '.join(CUSTOM_STATUSES)}.")
        else:
            status = CUSTOM_STATUSES[CUSTOM_STATUSES.index(found)]
    source_url = _string(payload, "source_url", problems, required=False, max_len=None)
    if source_url is not None and http_url(source_url) is None:
        problems.append("'source_url' must be an absolute http or https URL (at most 2048 characters).")
        source_url = None
    dedup_key = _string(payload, "dedup_key", problems, required=False, max_len=DEDUP_KEY_MAX)
    if dedup_key is not None and not dedup_key.strip():
        problems.append("'dedup_key' must not be blank; omit it to always create a new incident.")
    metadata = _metadata(payload.get("metadata"), problems)
    if problems:
        raise InvalidPayload.from_problems(problems)
    assert title is not None and service_id is not None
    action: Action = "resolve" if status == "resolved" else "trigger"
    return NormalizedAlert(
        source="custom",
        action=action,
        title=title,
        description=description,
        severity=severity,
        dedup_key=dedup_key,
        source_url=source_url,
        service_hint=service_id,
        status_hint=status,
        metadata=metadata,
        summary=f"Custom webhook: {status}" + (f" ({severity})" if severity else ""),
        raw_details={"status": status, "metadata": metadata} if metadata else {"status": status},
    )


def _metadata(value: object, problems: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"'metadata' must be an object of string values, not {json_type(value)}.")
        return {}
    if len(value) > METADATA_MAX_KEYS:
        problems.append(f"'metadata' may have at most {METADATA_MAX_KEYS} keys (got {len(value)}).")
    bad = sorted(key for key, item in value.items() if not isinstance(item, str))
    if bad:
        problems.append(f"'metadata' values must be strings; not for {', '.join(repr(k) for k in bad[:10])}.")
    if any(not key.strip() for key in value):
        problems.append("'metadata' keys must not be blank.")
    return {key: item for key, item in value.items() if isinstance(item, str)}


# --- legacy schema --------------------------------------------------------------------------------


def parse_legacy_payload(payload: dict[str, Any]) -> NormalizedAlert:
    problems: list[str] = []
    title = _string(payload, "title", problems, required=True, max_len=None)
    description = _string(payload, "description", problems, required=False, max_len=None)
    severity: Severity = LEGACY_DEFAULT_SEVERITY
    if payload.get("severity") is not None:
        word = _legacy_word(payload["severity"])
        if word is None:
            problems.append("'severity' must be one of Critical, High, Medium, Low or Pre-emptive.")
        else:
            severity = word
    service = _string(payload, "service", problems, required=False, max_len=None)
    affected = payload.get("affected_services")
    if affected is not None and (not isinstance(affected, list) or not all(isinstance(s, str) for s in affected)):
        problems.append("'affected_services' must be an array of strings.")
        affected = None
    impact = payload.get("customer_impact")
    if impact is not None and not isinstance(impact, bool):
        problems.append(f"'customer_impact' must be true or false, not {json_type(impact)}.")
        impact = None
    tags = payload.get("tags")
    if tags is not None and not isinstance(tags, dict):
        problems.append(f"'tags' must be an object of key-value pairs, not {json_type(tags)}.")
        tags = None
    if problems:
        raise InvalidPayload.from_problems(problems)
    assert title is not None
    tags = tags or {}
    metadata: dict[str, str] = {"customer_impact": "true" if impact else "false"}
    if service:
        metadata["service"] = service
    if affected:
        metadata["affected_services"] = ", ".join(s.strip() for s in affected if s.strip())
    for key, value in list(tags.items())[:LEGACY_EXTRA_MAX]:
        metadata[f"tags.{key}"] = stringify(value)
    extras = {k: v for k, v in payload.items() if k not in LEGACY_FIELDS}
    for key, value in list(extras.items())[:LEGACY_EXTRA_MAX]:
        metadata.setdefault(key, stringify(value))
    hint = service_hint(tags.get("service_id"), service, *(affected or [])[:1])
    return NormalizedAlert(
        source="legacy",
        action="trigger",
        title=title,
        description=description,
        severity=severity,
        service_hint=hint,
        metadata=metadata,
        summary=f"Legacy webhook alert ({severity})" + (" with customer impact" if impact else ""),
        raw_details={k: v for k, v in payload.items() if k not in ("title", "description")},
    )
