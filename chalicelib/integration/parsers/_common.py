"""Helpers the source parsers share: JSON loading, tolerant field access, hints, URLs, times."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import urlsplit

from chalicelib.errors import InvalidPayload
from chalicelib.integration.normalized import stringify
from chalicelib.json_body import JsonBodyError, read_json
from chalicelib.severity import SEVERITIES, Severity, severity_word

URL_MAX: Final = 2048
_SERVICE_ID_RE: Final = re.compile(r"SER-[0-9]{5,}", re.IGNORECASE)
_SERVICE_KEY_RE: Final = re.compile(r"svc_[a-z0-9]{10}", re.IGNORECASE)
_SEV_TOKEN_RE: Final = re.compile(r"(?<![A-Za-z0-9])SEV[-_ ]?([0-4])(?![0-9])", re.IGNORECASE)


def load_json_object(body: bytes | str, what: str = "The body") -> dict[str, Any]:
    """The body as a JSON object, or INVALID_PAYLOAD (not UTF-8, not JSON, too deep, not an
    object). The gate bounded its size already."""
    try:
        text = body.decode("utf-8-sig") if isinstance(body, bytes | bytearray) else body
    except UnicodeDecodeError:
        raise InvalidPayload(f"{what} is not UTF-8 text.") from None
    if not text.strip():
        raise InvalidPayload(f"{what} is empty; a JSON object is required.")
    try:
        value = read_json(text)
    except JsonBodyError as exc:
        raise InvalidPayload(f"{what} is not valid JSON: {exc.problem}") from None
    if not isinstance(value, dict):
        raise InvalidPayload(f"{what} must be a JSON object, not {json_type(value)}.")
    return value


def json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def obj(value: object) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (tolerant access into templates)."""
    return value if isinstance(value, dict) else {}


def listed(value: object) -> list[Any]:
    """`value` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def compact(values: Mapping[str, object]) -> dict[str, str]:
    """Reference metadata: entries with a value, each as bounded text."""
    return {key: stringify(value) for key, value in values.items() if value is not None and value != ""}


def dig(value: object, *path: str) -> Any:
    """value[path[0]][path[1]]... or None when any step is missing or not an object."""
    for step in path:
        if not isinstance(value, dict):
            return None
        value = value.get(step)
    return value


def text(value: object) -> str | None:
    """A scalar as stripped text (numbers too); None for blanks, objects, arrays and null."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str | int | float):
        stripped = str(value).strip()
        return stripped or None
    return None


def first_text(*values: object) -> str | None:
    """The first value that is non-blank text; a list yields its first non-blank item."""
    for value in values:
        if isinstance(value, list):
            value = next((t for t in (text(v) for v in value) if t), None)
        found = text(value)
        if found:
            return found
    return None


def service_hint(*candidates: object) -> str | None:
    """The first candidate that is a `SER-nnnnn` id (upper-cased) or a `svc_` key (lower-cased).

    A candidate may be a list (New Relic accumulations are arrays)."""
    for candidate in candidates:
        values = candidate if isinstance(candidate, list) else [candidate]
        for value in values:
            found = text(value)
            if not found:
                continue
            if _SERVICE_ID_RE.fullmatch(found):
                return found.upper()
            if _SERVICE_KEY_RE.fullmatch(found):
                return found.lower()
    return None


def severity_token(*texts: object) -> Severity | None:
    """A `SEV0`..`SEV4` token (also `sev-1`, `SEV_2`) in free text, first match wins."""
    for value in texts:
        if isinstance(value, str):
            match = _SEV_TOKEN_RE.search(value)
            if match:
                return SEVERITIES[int(match.group(1))]
    return None


def http_url(value: object) -> str | None:
    """`value` when it is an absolute http(s) URL with a host (<= 2048 chars, no spaces), else None."""
    if not isinstance(value, str):
        return None
    url = value.strip()
    if not url or len(url) > URL_MAX or any(ch.isspace() or not ch.isprintable() for ch in url):
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    return url


def epoch_ms(value: object) -> datetime | None:
    """Epoch milliseconds (number or digit string) as an aware datetime; None when not plausible."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if not isinstance(value, int | float):
        return None
    try:
        moment = datetime.fromtimestamp(value / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment if 2000 <= moment.year <= 2200 else None


def iso_time(value: object) -> datetime | None:
    """An ISO 8601 / RFC 3339 time (also CloudWatch's `+0000` offsets) as aware UTC, else None."""
    if not isinstance(value, str) or not value.strip() or len(value) > 64:
        return None
    raw = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
    match = re.fullmatch(r"(.*[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)([+-]\d{2})(\d{2})", raw)
    if match:  # +0000 -> +00:00
        raw = f"{match.group(1)}{match.group(2)}:{match.group(3)}"
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment if 2000 <= moment.year <= 2200 else None


def mapped(source: str, value: object) -> Severity | None:
    """A provider's severity word read through the one table (chalicelib.severity), `source`
    naming whose overrides apply; None for a word the table does not know (service default)."""
    return severity_word(text(value), source)
