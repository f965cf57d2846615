"""The public uptime document of a page (`/status/{slug}/uptime.json`, and the bars of the human
page): its components' history of the last 90 days through the pure rules of uptime.py.

Cost: one more Query on the page's partition (the history of the period), on top of the two
every public document makes; the answer is cached like the others.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib.statuspage import history, public, uptime
from chalicelib.statuspage.public_models import PublicComponentUptime, PublicUptime, PublicUptimeDay
from chalicelib.statuspage.repository import item_id


def _page_order(view: public.PageView) -> list[str]:
    """Component ids as the page shows them: per section, its ungrouped components, then its groups'."""
    order: list[str] = []
    for section in public.components(view)["sections"]:
        order += [c["component_id"] for c in section["components"]]
        for group in section["groups"]:
            order += [c["component_id"] for c in group["components"]]
    return order


def document(view: public.PageView, now: datetime) -> dict[str, Any]:
    """Per component, `uptime.DAYS` days oldest first and the figure over the period. Counted up
    to the start of the current minute (like every time the page shows, so the document and its
    ETag change at most once a minute, or with a new change), or to the last change recorded if
    that is later: a change made a few seconds ago is already on the bars."""
    minute = now.replace(second=0, microsecond=0)
    start = uptime.window_start(minute)
    items = history.load_since(view.page_id, start)
    now = max([minute, *(i.created_at for i in items if i.created_at is not None and i.created_at <= now)])
    changes = history.changes_by_component(items)
    marks = history.marks_by_component(items)
    holding: dict[str, list[tuple[str, datetime | None]]] = {}
    for window in view.active_windows:
        for component_id in window.component_ids or []:
            holding.setdefault(component_id, []).append((item_id(window), window.scheduled_start))
    by_id = {item_id(c): c for c in view.structure.components}
    components = []
    for component_id in _page_order(view):
        component = by_id[component_id]
        spans = uptime.maintenance_spans(
            marks.get(component_id, []), since=start, in_progress=holding.get(component_id, [])
        )
        result = uptime.daily_uptime(
            now=now,
            created_at=component.created_at or start,
            current_status=component.status or "unknown",
            changes=changes.get(component_id, []),
            maintenance=spans,
        )
        components.append(
            PublicComponentUptime(
                component_id=component_id,
                name=component.name or "",
                uptime_percent=result.uptime_percent,
                days=[
                    PublicUptimeDay(date=day.day, uptime_percent=day.uptime_percent, worst_status=day.worst_status)
                    for day in result.days
                ],
            )
        )
    return PublicUptime(
        days=uptime.DAYS,
        start_date=start.date(),
        end_date=now.date(),
        down_weights={status: tenths / 10 for status, tenths in uptime.DOWN_WEIGHT_TENTHS.items()},
        components=components,
    ).model_dump(mode="json")
