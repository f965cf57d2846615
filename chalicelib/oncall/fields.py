"""Reading stored/JSON dictionaries into domain dataclasses, collecting every shape problem.

Shared by the on-call and escalation models. Numbers may come back from DynamoDB as Decimal and
from JSON as 5.0; times are RFC 3339 strings (or datetimes) and must carry a UTC offset.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from chalicelib.errors import ValidationFailed

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(2200, 1, 1, tzinfo=UTC)
_PLACEHOLDER_MOMENT = EARLIEST


def format_moment(moment: datetime) -> str:
    """RFC 3339 in UTC with a Z, keeping sub-second precision only when there is some."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def moment_problem(value: object) -> str | None:
    """Why `value` is not a usable stored time, or None."""
    if not isinstance(value, datetime):
        return "must be a date-time"
    if value.tzinfo is None or value.utcoffset() is None:
        return "must include a UTC offset (or Z)"
    if not EARLIEST <= value < LATEST:
        return "must be between 1970 and 2199"
    return None


def parse_moment(value: object) -> datetime | None:
    """An aware datetime from a datetime or an ISO 8601 string with an offset; None otherwise."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else None
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def as_int(value: object) -> int | None:
    """An integer from int, integral float or integral Decimal; None otherwise (bools are not ints)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
        return int(value)
    return None


class FieldReader:
    """Reads fields, records `{field, message}` problems, returns placeholders so reading goes on."""

    def __init__(self) -> None:
        self.problems: list[dict[str, str]] = []

    def fail(self, where: str, message: str) -> None:
        self.problems.append({"field": where, "message": message})

    def raise_if_any(self, message: str) -> None:
        if self.problems:
            raise ValidationFailed.for_fields(self.problems, message)

    def mapping(self, value: Any, where: str) -> Mapping[str, Any]:
        if isinstance(value, Mapping):
            return value
        self.fail(where, "must be an object")
        return {}

    def items(self, data: Mapping[str, Any], key: str, where: str, *, optional: bool = False) -> list[Any]:
        value = data.get(key)
        if value is None and optional:
            return []
        if not isinstance(value, list | tuple):
            self.fail(where, "must be a list")
            return []
        return list(value)

    def text(self, data: Mapping[str, Any], key: str, where: str) -> str:
        value = data.get(key)
        if not isinstance(value, str):
            self.fail(where, "must be a string")
            return ""
        return value

    def optional_text(self, data: Mapping[str, Any], key: str, where: str) -> str | None:
        if data.get(key) is None:
            return None
        return self.text(data, key, where)

    def integer(self, data: Mapping[str, Any], key: str, where: str) -> int:
        value = as_int(data.get(key))
        if value is None:
            self.fail(where, "must be an integer")
            return 0
        return value

    def optional_int(self, data: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> int | None:
        if data.get(key) is None and not required:
            return None
        return self.integer(data, key, where)

    def boolean(self, data: Mapping[str, Any], key: str, where: str) -> bool:
        value = data.get(key)
        if not isinstance(value, bool):
            self.fail(where, "must be true or false")
            return False
        return value

    def moment(self, data: Mapping[str, Any], key: str, where: str) -> datetime:
        value = parse_moment(data.get(key))
        if value is None:
            self.fail(where, "must be a date-time with a UTC offset (or Z)")
            return _PLACEHOLDER_MOMENT
        return value

    def optional_moment(self, data: Mapping[str, Any], key: str, where: str) -> datetime | None:
        if data.get(key) is None:
            return None
        return self.moment(data, key, where)
