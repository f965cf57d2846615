"""What one export request asks for, checked: kind, range, filters, page size. Pure.

The range is [since, until), at most MAX_RANGE long. Each kind takes the filters that make
sense for its rows (`FILTERS`); a filter a kind has no column for is refused, not ignored.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from chalicelib import clock
from chalicelib.errors import NotFound, ValidationFailed
from chalicelib.exports.columns import EXPORT_KINDS, ExportKind
from chalicelib.exports.formats import CellValue
from chalicelib.severity import SEVERITIES

MAX_RANGE = timedelta(days=366)
DEFAULT_LIMIT = 1000
MAX_LIMIT = 5000
FilterName = str
# filter -> the column it compares with, per kind
FILTERS: dict[ExportKind, dict[FilterName, str]] = {
    "incidents": {"service": "service_keys", "team": "team_id", "severity": "severity"},
    "alerts": {"service": "service_key", "severity": "severity"},
    "notifications": {"user": "recipient_user_id", "channel": "channel"},
    "shifts": {"team": "team_id", "user": "user_id"},
}
ALL_FILTERS: tuple[FilterName, ...] = ("service", "team", "severity", "user", "channel")


@dataclass(frozen=True)
class ExportRequest:
    organization_id: str
    kind: ExportKind
    since: datetime
    until: datetime
    filters: dict[FilterName, str] = field(default_factory=dict)

    def digest(self) -> str:
        """Names this request's rows (not its page): a cursor is good for the same request only."""
        parts = [self.organization_id, self.kind, clock.isoformat(self.since), clock.isoformat(self.until)]
        parts += [f"{name}={self.filters[name]}" for name in sorted(self.filters)]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]

    def keeps(self, row: dict[str, CellValue]) -> bool:
        for name, wanted in self.filters.items():
            value = row.get(FILTERS[self.kind][name])
            if value != wanted and not (isinstance(value, list) and wanted in value):
                return False
        return True


def export_kind(value: str) -> ExportKind:
    for kind in EXPORT_KINDS:
        if kind == value:
            return kind
    raise NotFound(f"There is no export named {value!r}; exports: {', '.join(EXPORT_KINDS)}.")


def checked_request(
    *, organization_id: str, kind: ExportKind, since: datetime, until: datetime, filters: dict[FilterName, str | None]
) -> ExportRequest:
    problems: list[dict[str, str]] = []
    if until <= since:
        problems.append({"field": "until", "message": "must be after since"})
    elif until - since > MAX_RANGE:
        problems.append({"field": "until", "message": f"must be at most {MAX_RANGE.days} days after since"})
    given = {name: value for name, value in filters.items() if value is not None}
    for name in sorted(given):
        if name not in FILTERS[kind]:
            allowed = ", ".join(FILTERS[kind])
            problems.append({"field": name, "message": f"does not apply to the {kind} export (its filters: {allowed})"})
    if "severity" in given and given["severity"] not in SEVERITIES:
        problems.append({"field": "severity", "message": f"must be one of {', '.join(SEVERITIES)}"})
    if problems:
        raise ValidationFailed.for_fields(problems)
    return ExportRequest(organization_id, kind, since, until, {k: v for k, v in given.items() if k in FILTERS[kind]})
