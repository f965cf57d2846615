"""Postmortem rules, all pure: status moves, numbers, the response-timeline prefill and HTML rendering.

The structured forms arrive here as plain dicts (what the models dump and the table stores), so
these functions need neither pydantic nor AWS.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from chalicelib.errors import TransitionNotAllowed
from chalicelib.templates import render

Level = Literal["light", "standard", "full"]
Status = Literal["draft", "in_review", "published"]
ActionItemStatus = Literal["pending", "in_progress", "completed"]
LEVELS: tuple[Level, ...] = ("light", "standard", "full")
STATUSES: tuple[Status, ...] = ("draft", "in_review", "published")
ACTION_ITEM_STATUSES: tuple[ActionItemStatus, ...] = ("pending", "in_progress", "completed")
INITIAL_STATUS: Status = "draft"
PUBLISHED: Status = "published"

# docs/POSTMORTEMS.md: forward through review to published; review may send it back to draft.
ALLOWED_MOVES: Mapping[str, frozenset[str]] = {
    "draft": frozenset({"in_review"}),
    "in_review": frozenset({"published", "draft"}),
    "published": frozenset(),
}

# An incident status counts as "identified" when its name says so ("identified", "cause_identified").
IDENTIFIED_MARKER = "identif"


def check_transition(current: str, target: str) -> bool:
    """True when the status changes, False for a move to the current status; raises when not allowed."""
    if target == current:
        return False
    allowed = ALLOWED_MOVES.get(current, frozenset())
    if target not in allowed:
        raise TransitionNotAllowed(
            f"A postmortem cannot move from {current} to {target}.",
            details={"from": current, "to": target, "allowed": sorted(allowed)},
        )
    return True


def postmortem_number(year: int, sequence: int) -> str:
    return f"PM-{year}-{sequence:04d}"


def counter_name(year: int) -> str:
    return f"postmortem#{year}"


def human_duration(seconds: float) -> str:
    """Whole units, largest first, at most two: "45s", "12m", "1h 5m", "2h", "3d 4h"."""
    total = int(seconds)
    if total < 60:
        return f"{total}s"
    minutes, _ = divmod(total, 60)
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h" if hours else f"{days}d"


def first_identified_at(status_moves: Iterable[tuple[datetime, str]]) -> datetime | None:
    """The earliest move into an identified-like status, from (moved_at, to_status) pairs."""
    moments = [moved_at for moved_at, to_status in status_moves if IDENTIFIED_MARKER in to_status.lower()]
    return min(moments, default=None)


def prefill_response_timeline(
    *,
    created_at: datetime,
    acknowledged_at: datetime | None,
    identified_at: datetime | None,
    resolved_at: datetime | None,
    now: datetime,
) -> dict[str, str | None]:
    """Durations from the incident's creation; null when the moment is unknown.

    A moment before the creation or after `now` (a skewed writer's clock) is treated as unknown
    rather than shown as a negative or not-yet-happened duration."""

    def since_created(moment: datetime | None) -> str | None:
        if moment is None or moment < created_at or moment > now:
            return None
        return human_duration((moment - created_at).total_seconds())

    return {
        "time_to_acknowledge": since_created(acknowledged_at),
        "time_to_identify": since_created(identified_at),
        "time_to_resolve": since_created(resolved_at),
    }


# ---------------------------------------------------------------- HTML
# Markup lives in chalicelib/templates/postmortem/, where autoescape escapes every value. Jinja2
# loads on the first rendering, not with this module (the models import it).


def _definition_list(css_class: str, rows: Sequence[tuple[str, object]]) -> str:
    return render("postmortem/definition_list.html", css_class=css_class, rows=rows)


def render_impact(impact: Mapping[str, Any]) -> str:
    services = impact.get("services_affected")
    return _definition_list(
        "postmortem-impact",
        [
            ("Duration", impact.get("duration")),
            ("Users affected", impact.get("users_affected")),
            ("Services affected", ", ".join(str(s) for s in services) if services else None),
            ("Revenue impact", impact.get("revenue_impact")),
        ],
    )


def render_timeline(events: Sequence[Mapping[str, Any]]) -> str:
    rows = [(event.get("timestamp"), event.get("description")) for event in events]
    return render("postmortem/timeline.html", events=rows)


def render_action_items(action_items: Sequence[Mapping[str, Any]]) -> str:
    items = [{key: item.get(key) for key in ("text", "owner_email", "due_date", "status")} for item in action_items]
    return render("postmortem/action_items.html", items=items)


def render_response_timeline(response_timeline: Mapping[str, Any]) -> str:
    return _definition_list(
        "postmortem-response-timeline",
        [
            ("Time to acknowledge", response_timeline.get("time_to_acknowledge")),
            ("Time to identify", response_timeline.get("time_to_identify")),
            ("Time to resolve", response_timeline.get("time_to_resolve")),
        ],
    )


RENDERERS: Mapping[str, Callable[[Any], str]] = {
    "impact": render_impact,
    "timeline": render_timeline,
    "action_items": render_action_items,
    "response_timeline": render_response_timeline,
}
STRUCTURED_FIELDS: tuple[str, ...] = tuple(RENDERERS)


def rendered_html(field: str, value: Any) -> str | None:
    """The `<field>_html` for a structured value; None for null. A legacy HTML string is not re-rendered
    here (the caller keeps whatever HTML the legacy record carried)."""
    if value is None or isinstance(value, str):
        return None
    return RENDERERS[field](value)
