"""Alert grouping per service, as data, and the pure rule that says which group an alert joins.

`{"type": "none"}` (the default): every new alert opens its own incident.
`{"type": "time", "window_minutes": N}`: a new alert joins the service's open incident if that
incident's first alert came less than N minutes ago.
`{"type": "content", "fields": [...], "window_minutes": N | null}`: the same, but only alerts whose
named fields are all equal share an incident; without a window they share it as long as it is open.
The window runs from the incident's first alert (as PagerDuty's time-based grouping does), so a
storm that never stops still opens a fresh incident every N minutes instead of one forever.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, Literal

from chalicelib.errors import ValidationFailed

GroupingType = Literal["none", "time", "content"]
GROUPING_TYPES: Final = ("none", "time", "content")
WINDOW_MINUTES_MAX: Final = 24 * 60
CONTENT_FIELDS_MAX: Final = 10
# The alert fields content grouping may compare (labels.<name> for any label).
CONTENT_FIELDS: Final = ("title", "source", "severity", "integration_type", "dedup_key")
LABEL_PREFIX: Final = "labels."
LABEL_NAME_MAX: Final = 100


@dataclass(frozen=True)
class AlertGrouping:
    type: GroupingType = "none"
    window_minutes: int | None = None
    fields: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        if self.type == "none":
            return {"type": "none"}
        if self.type == "time":
            return {"type": "time", "window_minutes": self.window_minutes}
        return {"type": "content", "fields": list(self.fields), "window_minutes": self.window_minutes}


NO_GROUPING: Final = AlertGrouping()


def is_content_field(name: str) -> bool:
    if name in CONTENT_FIELDS:
        return True
    label = name.removeprefix(LABEL_PREFIX)
    return name.startswith(LABEL_PREFIX) and 0 < len(label) <= LABEL_NAME_MAX


def grouping_problems(grouping: AlertGrouping) -> list[tuple[str, str]]:
    """(field, message) for each rule the grouping breaks; empty when it is valid."""
    problems: list[tuple[str, str]] = []
    if grouping.type not in GROUPING_TYPES:
        return [("alert_grouping.type", "must be none, time or content")]
    window = grouping.window_minutes
    if grouping.type == "none":
        if window is not None or grouping.fields:
            problems.append(("alert_grouping", "type none takes no window_minutes and no fields"))
        return problems
    if grouping.type == "time" and window is None:
        problems.append(("alert_grouping.window_minutes", "is required for time grouping"))
    if window is not None and not 1 <= window <= WINDOW_MINUTES_MAX:
        problems.append(("alert_grouping.window_minutes", f"must be 1 to {WINDOW_MINUTES_MAX}"))
    if grouping.type == "time" and grouping.fields:
        problems.append(("alert_grouping.fields", "time grouping takes no fields (use content grouping)"))
    if grouping.type == "content":
        if not grouping.fields:
            problems.append(("alert_grouping.fields", "content grouping needs at least one field"))
        if len(grouping.fields) > CONTENT_FIELDS_MAX:
            problems.append(("alert_grouping.fields", f"at most {CONTENT_FIELDS_MAX} fields"))
        for name in grouping.fields:
            if not is_content_field(name):
                problems.append(
                    ("alert_grouping.fields", f"{name!r} is not one of {', '.join(CONTENT_FIELDS)} or labels.<name>")
                )
    return problems


def check_grouping(grouping: AlertGrouping) -> AlertGrouping:
    """The grouping, or ValidationFailed listing every problem (details.fields)."""
    problems = grouping_problems(grouping)
    if problems:
        raise ValidationFailed.for_fields(
            [{"field": name, "message": message} for name, message in problems], "The alert_grouping is invalid."
        )
    return grouping


def grouping_from_dict(value: Mapping[str, Any] | None) -> AlertGrouping:
    """The stored form back (absent on services made before grouping: none)."""
    if not value or value.get("type") not in GROUPING_TYPES or value.get("type") == "none":
        return NO_GROUPING
    window = value.get("window_minutes")
    return AlertGrouping(
        type=value["type"],
        window_minutes=int(window) if window is not None else None,
        fields=tuple(str(name) for name in value.get("fields") or ()),
    )


def field_value(name: str, values: Mapping[str, str | None], labels: Mapping[str, str]) -> str | None:
    if name.startswith(LABEL_PREFIX):
        return labels.get(name.removeprefix(LABEL_PREFIX))
    return values.get(name)


def group_key(grouping: AlertGrouping, *, values: Mapping[str, str | None], labels: Mapping[str, str]) -> str | None:
    """Which group of its service an alert belongs to; None when the service does not group.
    Content grouping keys on a hash of the named fields' values (absent and empty differ)."""
    if grouping.type == "none":
        return None
    if grouping.type == "time":
        return "time"
    compared = [[name, field_value(name, values, labels)] for name in grouping.fields]
    digest = hashlib.sha256(json.dumps(compared, ensure_ascii=False).encode("utf-8")).hexdigest()[:32]
    return f"content:{digest}"


def window_end(grouping: AlertGrouping, first_alert_at: datetime) -> datetime | None:
    """Until when an incident opened at `first_alert_at` takes new alerts; None: while it is open."""
    if grouping.window_minutes is None:
        return None
    return first_alert_at + timedelta(minutes=grouping.window_minutes)


def joins(window_ends_at: datetime | None, now: datetime) -> bool:
    """Whether an alert arriving at `now` still joins the group's open incident."""
    return window_ends_at is None or now < window_ends_at
