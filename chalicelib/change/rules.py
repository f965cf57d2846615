"""PagerDuty change events (`POST /v2/change/enqueue`): the body, checked as PagerDuty checks it,
and the keys a change is stored under. Pure: no storage, no clock.

The body: routing_key, payload {summary (required, <= 1024), timestamp (ISO 8601, optional),
source, custom_details (an object)}, links [{href, text}]. Every problem is reported at once,
as PagerDuty-style strings in `InvalidPayload.details` (rendered as `{status: "invalid event",
message, errors}`). Tocsin's own bounds, stricter than PagerDuty's where a stored change is shown
in lists and incident details: at most LINKS_MAX links (more are ignored), custom_details at most
CUSTOM_DETAILS_MAX_BYTES as JSON, and a link's href must be an http(s) URL.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from chalicelib.directory import rules as directory_rules
from chalicelib.errors import InvalidPayload
from chalicelib.integration.parsers._common import http_url, iso_time, load_json_object
from chalicelib.model_base import scrub_text

SUMMARY_MAX: Final = 1024
SOURCE_MAX: Final = 1024
LINK_TEXT_MAX: Final = 1024
LINKS_MAX: Final = 10
CUSTOM_DETAILS_MAX_BYTES: Final = 16 * 1024
# PagerDuty keeps change events 90 days; so does Tocsin (the item's TTL, counted from receipt).
RETENTION: Final = timedelta(days=90)
# A change without payload.timestamp cannot tell a retry from a second, identical change: the same
# content within this window is taken as a retry. With a timestamp, the same content is always one change.
UNTIMED_RETRY_WINDOW: Final = timedelta(hours=1)
CHANGE_ID_PREFIX: Final = "chg_"
_ID_HEX: Final = 24


@dataclass(frozen=True)
class ChangeLink:
    href: str
    text: str | None = None


@dataclass(frozen=True)
class ChangeEvent:
    """A valid change event. `fingerprint` identifies its content (routing key included)."""

    routing_key: str
    summary: str
    fingerprint: str
    source: str | None = None
    timestamp: datetime | None = None
    custom_details: dict[str, Any] | None = None
    links: tuple[ChangeLink, ...] = field(default_factory=tuple)
    service_ref: str | None = None  # payload.custom_details.service_id: a SER- id or a svc_ key


def routing_key_of(document: object) -> str | None:
    """The body's routing key when it is a non-blank string (the gate checks it names an integration)."""
    value = document.get("routing_key") if isinstance(document, dict) else None
    return value if isinstance(value, str) and value.strip() else None


def parse_change_event(body: bytes | str) -> ChangeEvent:
    """The change event in `body`, or InvalidPayload listing every problem."""
    document = load_json_object(body, "The event")
    errors: list[str] = []
    routing_key = routing_key_of(document)
    if routing_key is None:
        errors.append("'routing_key' is missing or blank")
    payload = document.get("payload")
    if not isinstance(payload, dict):
        errors.append("'payload' is missing or not an object")
        payload = {}
    summary = _summary(payload.get("summary"), errors)
    source = _optional_text(payload.get("source"), "payload.source", SOURCE_MAX, errors)
    timestamp = _timestamp(payload.get("timestamp"), errors)
    details = _custom_details(payload.get("custom_details"), errors)
    service_ref = _service_ref(details, errors)
    links = _links(document.get("links"), errors)
    if errors or routing_key is None or summary is None:
        raise InvalidPayload("Event object is invalid: " + "; ".join(errors), details=errors)
    return ChangeEvent(
        routing_key=routing_key,
        summary=summary,
        fingerprint=fingerprint(document),
        source=source,
        timestamp=timestamp,
        custom_details=details,
        links=links,
        service_ref=service_ref,
    )


def fingerprint(document: dict[str, Any]) -> str:
    """The content's hash: the same JSON (any key order or spacing) gives the same fingerprint."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def change_id(event: ChangeEvent, received_at: datetime) -> str:
    """Derived from the content, so a retried delivery names the same change. An untimed change is
    placed at its receipt, so its id includes that instant (two identical untimed changes an hour
    apart are two changes)."""
    seed = event.fingerprint if event.timestamp is not None else f"{event.fingerprint}#{sort_time(received_at)}"
    return CHANGE_ID_PREFIX + hashlib.sha256(seed.encode()).hexdigest()[:_ID_HEX]


def claim_lifetime(event: ChangeEvent) -> timedelta:
    """How long the content's claim holds off duplicates."""
    return RETENTION if event.timestamp is not None else UNTIMED_RETRY_WINDOW


def sort_time(moment: datetime) -> str:
    """Fixed-width UTC text that sorts as time does (microseconds, Z)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def sort_key(moment: datetime, change: str) -> str:
    return f"{sort_time(moment)}#{change}"


def sort_range(since: datetime | None, until: datetime | None) -> tuple[str, str]:
    """Inclusive sort-key bounds for changes timed in [since, until] ('#' < every id character < '~')."""
    low = sort_time(since) if since is not None else "0"  # below every year (DynamoDB refuses "")
    high = f"{sort_time(until)}#~" if until is not None else "~"
    return low, high


def service_partition(organization_id: str, service_key: str) -> str:
    return f"{organization_id}#{service_key}"


# --- the payload's fields ----------------------------------------------------------------------


def _summary(value: object, errors: list[str]) -> str | None:
    if not isinstance(value, str) or not _one_line(value):
        errors.append("'payload.summary' is missing or blank")
        return None
    if len(value) > SUMMARY_MAX:
        errors.append(f"'payload.summary' is too long (must be at most {SUMMARY_MAX} characters)")
        return None
    return _one_line(value)


def _optional_text(value: object, name: str, limit: int, errors: list[str]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        errors.append(f"'{name}' must be a string")
        return None
    if len(value) > limit:
        errors.append(f"'{name}' is too long (must be at most {limit} characters)")
        return None
    return _one_line(value) or None


def _one_line(value: str) -> str:
    """Text as shown in lists and incident details: one line, without control, bidirectional-override
    or invisible characters (cleaned, as an alert's text is, never refused for them)."""
    return scrub_text(value, multiline=False).strip()


def _timestamp(value: object, errors: list[str]) -> datetime | None:
    if value is None:
        return None
    moment = iso_time(value)
    if moment is None:
        errors.append("'payload.timestamp' is invalid (must be an ISO 8601 date-time, e.g. 2026-11-22T08:42:58Z)")
    return moment


def _custom_details(value: object, errors: list[str]) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        errors.append("'payload.custom_details' must be an object")
        return None
    size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    if size > CUSTOM_DETAILS_MAX_BYTES:
        errors.append(f"'payload.custom_details' is too large (at most {CUSTOM_DETAILS_MAX_BYTES} bytes as JSON)")
        return None
    return value


def _service_ref(details: dict[str, Any] | None, errors: list[str]) -> str | None:
    value = details.get("service_id") if details else None
    if value is None:
        return None
    if isinstance(value, str):
        candidate = value.strip()
        if directory_rules.is_service_key(candidate.lower()):
            return candidate.lower()
        if directory_rules.is_service_id(directory_rules.normalize_service_id(candidate)):
            return directory_rules.normalize_service_id(candidate)
    errors.append("'payload.custom_details.service_id' is invalid (must be a service id SER-nnnnn or key svc_...)")
    return None


def _links(value: object, errors: list[str]) -> tuple[ChangeLink, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        errors.append("'links' must be an array")
        return ()
    links: list[ChangeLink] = []
    for index, item in enumerate(value[:LINKS_MAX]):
        name = f"links[{index}]"
        if not isinstance(item, dict):
            errors.append(f"'{name}' must be an object")
            continue
        href = item.get("href")
        if not isinstance(href, str) or not href.strip():
            errors.append(f"'{name}.href' is missing or blank")
            continue
        url = http_url(href)
        if url is None:
            errors.append(f"'{name}.href' must be an http or https URL")
            continue
        text = _optional_text(item.get("text"), f"{name}.text", LINK_TEXT_MAX, errors)
        links.append(ChangeLink(href=url, text=text))
    return tuple(links)
