"""The normalized alert every inbound parser returns, and shared helpers.

Pure: no AWS, no I/O. A parser takes headers and raw body bytes and returns a `NormalizedAlert`, or
raises one of the `DeliveryRejected` errors of chalicelib.errors (`InvalidPayload`,
`InvalidSignature`, `SignatureExpired`). `NormalizedAlert` normalizes itself on construction, so every instance obeys
the incident limits (title 1..200 chars, description <= 10000) whatever a parser passed in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Final, Literal, get_args

from chalicelib.integration.details import keep_details
from chalicelib.model_base import scrub_text
from chalicelib.severity import SEVERITIES, Severity

Source = Literal[
    "custom", "legacy", "newrelic", "sentry", "alertmanager", "cloudwatch", "pagerduty", "opsgenie", "heartbeat"
]
Action = Literal["trigger", "acknowledge", "resolve", "note", "ignore", "confirm_subscription"]
StatusHint = Literal["new", "investigating", "resolved"]

SOURCES: tuple[Source, ...] = get_args(Source)
ACTIONS: tuple[Action, ...] = get_args(Action)
STATUS_HINTS: tuple[StatusHint, ...] = get_args(StatusHint)
SOURCE_NAMES: Final[Mapping[Source, str]] = {
    "custom": "Custom webhook",
    "legacy": "Legacy webhook",
    "newrelic": "New Relic",
    "sentry": "Sentry",
    "alertmanager": "Alertmanager",
    "cloudwatch": "CloudWatch",
    "pagerduty": "PagerDuty",
    "opsgenie": "Opsgenie",
    "heartbeat": "Heartbeat",
}

TITLE_MAX: Final = 200
DESCRIPTION_MAX: Final = 10_000
SUMMARY_MAX: Final = 200
DEDUP_KEY_MAX: Final = 255
METADATA_MAX_ENTRIES: Final = 50
METADATA_KEY_MAX: Final = 100
METADATA_VALUE_MAX: Final = 1_000
RAW_DETAILS_MAX_CHARS: Final = 16_000
WARNINGS_MAX: Final = 20
WARNING_MAX_CHARS: Final = 300
ELLIPSIS: Final = "\u2026"


@dataclass(frozen=True)
class NormalizedAlert:
    """What a delivery asks for, independent of its source.

    `severity` None means "use the service's default". `service_hint` is a `SER-nnnnn` id or a
    `svc_` key found on the alert (never a free-form name). `delivery_id` identifies this delivery
    (SNS MessageId, stable across retries), `routing_key` is the PagerDuty body's routing key and
    `subscribe_url` the (already checked) URL of an SNS SubscriptionConfirmation.
    `details` is what the delivery carried beyond the mapped fields (chalicelib.integration.details
    bounds it; what it cuts becomes a warning), `warnings` what the webhook answer tells the sender
    (fields kept as details, values cut or converted, an unknown severity word), `runbook_url` a
    link to the alert's runbook.
    """

    source: Source
    action: Action
    title: str = ""
    description: str | None = None
    severity: Severity | None = None
    dedup_key: str | None = None
    source_url: str | None = None
    service_hint: str | None = None
    status_hint: StatusHint | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    raw_details: dict[str, Any] = field(default_factory=dict)
    occurred_at: datetime | None = None
    delivery_id: str | None = None
    routing_key: str | None = None
    subscribe_url: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    runbook_url: str | None = None

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"unknown alert source {self.source!r}")
        if self.action not in ACTIONS:
            raise ValueError(f"unknown alert action {self.action!r}")
        if self.severity is not None and self.severity not in SEVERITIES:
            raise ValueError(f"not a canonical severity: {self.severity!r}")
        if self.status_hint is not None and self.status_hint not in STATUS_HINTS:
            raise ValueError(f"unknown status hint {self.status_hint!r}")
        name = SOURCE_NAMES[self.source]
        fix = object.__setattr__
        fix(self, "title", one_line(self.title, TITLE_MAX) or f"{name} alert")
        fix(self, "description", _optional(truncate(clean_text(self.description).strip(), DESCRIPTION_MAX)))
        fix(self, "summary", one_line(self.summary, SUMMARY_MAX) or f"{name}: {self.action}")
        fix(self, "dedup_key", normalize_dedup_key(self.dedup_key))
        for name_ in ("source_url", "service_hint", "subscribe_url", "runbook_url"):
            fix(self, name_, _optional(clean_text(getattr(self, name_)).strip()))
        for name_ in ("delivery_id", "routing_key"):  # identities: compared, never shown as text
            fix(self, name_, _optional(utf8_text(getattr(self, name_)).strip()))
        fix(self, "metadata", bounded_metadata(self.metadata))
        fix(self, "raw_details", bounded_details(self.raw_details))
        details, cut = keep_details(self.details)  # bounded already (a `replace`): nothing cut twice
        fix(self, "details", details)
        warnings = [one_line(warning, WARNING_MAX_CHARS) for warning in (*self.warnings, *cut)]
        fix(self, "warnings", tuple(dict.fromkeys(w for w in warnings if w))[:WARNINGS_MAX])

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form (for a queue message or a log line)."""
        data = asdict(self)
        data["occurred_at"] = self.occurred_at.isoformat() if self.occurred_at else None
        return data


# --- shared helpers -------------------------------------------------------------------------------


def get_header(headers: Mapping[str, str] | None, name: str) -> str | None:
    """The value of header `name`, case-insensitively, stripped; None when absent."""
    if not headers:
        return None
    value = headers.get(name)
    if value is None:
        wanted = name.lower()
        value = next((v for k, v in headers.items() if isinstance(k, str) and k.lower() == wanted), None)
    if value is None:
        return None
    return str(value).strip()


def utf8_text(value: object) -> str:
    """`value` as text that always encodes as UTF-8 (lone surrogates from JSON become '?')."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    return text.encode("utf-8", "replace").decode("utf-8")


def clean_text(value: object) -> str:
    """`utf8_text` without what the API's text rule refuses (chalicelib.model_base): controls become
    spaces, invisible formatting characters go, line breaks become LF. An alert is cleaned, never
    refused for it."""
    return scrub_text(utf8_text(value), multiline=True)


def truncate(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, the last one an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)].rstrip() + ELLIPSIS if limit > 0 else ""


def one_line(value: object, limit: int) -> str:
    """Cleaned text (`clean_text`) on one line: line breaks and runs of whitespace become one space.
    The characters real text needs stay (zero-width joiners in emoji, directional marks)."""
    return truncate(" ".join(clean_text(value).split()), limit)


def normalize_dedup_key(value: object) -> str | None:
    """A dedup key as stored: stripped text; longer than 255 chars becomes `sha256:<hex>` (stable)."""
    key = utf8_text(value).strip()  # an identity: kept as sent, so stored keys still match
    if not key:
        return None
    if len(key) > DEDUP_KEY_MAX:
        return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()
    return key


def stringify(value: object, limit: int = METADATA_VALUE_MAX) -> str:
    """A reference value as bounded text: strings as they are, anything else as compact JSON."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool) or value is None:
        text = json.dumps(value)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    return truncate(clean_text(text), limit)


def bounded_metadata(values: Mapping[str, object]) -> dict[str, str]:
    """At most 50 string->string entries, keys <= 100 and values <= 1000 chars, empty values dropped."""
    result: dict[str, str] = {}
    for key, value in values.items():
        if len(result) >= METADATA_MAX_ENTRIES:
            break
        name = one_line(key, METADATA_KEY_MAX)
        text = stringify(value)
        if name and text and name not in result:
            result[name] = text
    return result


_PROFILES: Final = ((1000, 25, 40, 6), (300, 10, 20, 4), (100, 5, 10, 2))


def bounded_details(value: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON-safe subset of `value` whose JSON form stays under ~16 000 characters."""
    for profile in _PROFILES:
        candidate = _bound(dict(value), *profile)
        if len(json.dumps(candidate, ensure_ascii=False)) <= RAW_DETAILS_MAX_CHARS:
            return candidate if isinstance(candidate, dict) else {}
    return {"truncated": True}


def _bound(value: Any, text_max: int, list_max: int, dict_max: int, depth: int) -> Any:
    if isinstance(value, str):
        return truncate(clean_text(value), text_max)
    if value is None or isinstance(value, bool | int):
        return value if not isinstance(value, int) or abs(value) < 10**18 else str(value)
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if depth <= 0:
        return ELLIPSIS
    if isinstance(value, Mapping):
        items = list(value.items())[:dict_max]
        return {one_line(k, METADATA_KEY_MAX): _bound(v, text_max, list_max, dict_max, depth - 1) for k, v in items}
    if isinstance(value, list | tuple):
        return [_bound(v, text_max, list_max, dict_max, depth - 1) for v in value[:list_max]]
    return truncate(clean_text(value), text_max)


def _optional(text: str) -> str | None:
    return text or None
