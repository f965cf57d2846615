"""Build the public status documents for a slug. Costs: summary and components are two Queries
(the page's structure, its active items); each listing page is one more Query, the history feeds
two (the newest incidents, the newest windows)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib import clock
from chalicelib.settings import Settings
from chalicelib.statuspage import feeds, rules
from chalicelib.statuspage.cursors import decode_cursor, encode_cursor
from chalicelib.statuspage.pages import public_url
from chalicelib.statuspage.public_models import (
    AffectedComponent,
    PublicComponent,
    PublicComponents,
    PublicGroup,
    PublicIncident,
    PublicIncidents,
    PublicIncidentUpdate,
    PublicMaintenance,
    PublicMaintenanceList,
    PublicPage,
    PublicSection,
    PublicSummary,
    incident_fields,
    window_fields,
)
from chalicelib.statuspage.repository import Structure, item_id, load_active, load_structure, page_id_for_slug
from chalicelib.statuspage.tables import INCIDENT_PREFIX, MAINTENANCE_PREFIX, StatusPageItem

PAGE_SIZE = 20


@dataclass
class PageView:
    """What every public document of one page starts from."""

    structure: Structure
    active_incidents: list[StatusPageItem]
    active_windows: list[StatusPageItem]

    @property
    def page_id(self) -> str:
        return self.structure.page.page_id

    def components(self) -> dict[str, PublicComponent]:
        """Every component with its effective status, by id, in creation order."""
        in_maintenance: dict[str, datetime] = {}
        for window in self.active_windows:
            for component_id in window.component_ids or []:
                in_maintenance[component_id] = max(
                    window.updated_at, in_maintenance.get(component_id, window.updated_at)
                )
        found: dict[str, PublicComponent] = {}
        for component in self.structure.components:
            component_id = item_id(component)
            since = in_maintenance.get(component_id)
            found[component_id] = PublicComponent(
                component_id=component_id,
                name=component.name or "",
                status=rules.effective_component_status(
                    component.status or "unknown", in_maintenance=since is not None
                ),
                updated_at=max(component.updated_at, since) if since else component.updated_at,
            )
        return found

    def affected(self, component_ids: list[str] | None) -> list[AffectedComponent]:
        names = self.structure.component_names()
        return [AffectedComponent(component_id=c, name=names[c]) for c in component_ids or [] if c in names]


def load_view(slug: str) -> PageView | None:
    """None for an unknown slug (or a page deleted a moment ago)."""
    page_id = page_id_for_slug(slug)
    structure = load_structure(page_id) if page_id else None
    if structure is None or structure.page.slug != slug:
        return None
    incidents, windows = load_active(structure.page.page_id)
    return PageView(structure, incidents, windows)


def summary(view: PageView, *, settings: Settings) -> dict[str, Any]:
    components = view.components()
    page = view.structure.page
    moments = [page.updated_at, *(c.updated_at for c in components.values())]
    moments += [i.updated_at for i in view.active_incidents] + [w.updated_at for w in view.active_windows]
    return PublicSummary(
        page=PublicPage(name=page.name or "", url=public_url(page.slug or "", settings=settings)),
        status=rules.worst(c.status for c in components.values()),
        updated_at=max(moments),
        active_incident_count=len(view.active_incidents),
        active_maintenance_count=len(view.active_windows),
    ).model_dump(mode="json")


def components(view: PageView) -> dict[str, Any]:
    by_id = view.components()
    structure = view.structure
    sections = []
    for section in structure.sections:
        section_id = item_id(section)
        in_section = [c for c in structure.components if c.section_id == section_id]
        groups = [
            PublicGroup(
                group_id=item_id(group),
                name=group.name or "",
                components=[by_id[item_id(c)] for c in in_section if c.group_id == item_id(group)],
            )
            for group in structure.groups
            if group.section_id == section_id
        ]
        sections.append(
            PublicSection(
                section_id=section_id,
                name=section.name or "",
                components=[by_id[item_id(c)] for c in in_section if c.group_id is None],
                groups=groups,
            )
        )
    return PublicComponents(sections=sections).model_dump(mode="json")


def public_incident(view: PageView, item: StatusPageItem) -> PublicIncident:
    return PublicIncident(
        incident_id=item_id(item),
        **incident_fields(item),
        updates=[
            PublicIncidentUpdate(status=u["status"], body=u["body"], published_at=clock.parse(u["published_at"]))
            for u in reversed(item.updates or [])
        ],
        affected_components=view.affected(item.component_ids),
    )


def public_window(view: PageView, item: StatusPageItem) -> PublicMaintenance:
    return PublicMaintenance(
        maintenance_id=item_id(item),
        **window_fields(item),
        affected_components=view.affected(item.component_ids),
    )


def _listing(
    view: PageView, prefix: str, scope: str, cursor: str | None, *, settings: Settings
) -> tuple[list[StatusPageItem], str | None]:
    """One page of items under `prefix`, newest first, and the cursor of the next page (or None).
    Reads one item more than it serves, so the last page never promises a next one."""
    secret = settings.api_key_hmac_secret
    start: dict[str, Any] | None = None
    if cursor is not None:
        item_key = decode_cursor(cursor, secret=secret, scope=f"{view.page_id}#{scope}", prefix=prefix)
        start = {"page_id": {"S": view.page_id}, "item_key": {"S": item_key}}
    found = list(
        StatusPageItem.query(
            view.page_id,
            StatusPageItem.item_key.startswith(prefix),
            scan_index_forward=False,
            limit=PAGE_SIZE + 1,
            last_evaluated_key=start,
        )
    )
    served = found[:PAGE_SIZE]
    more = len(found) > PAGE_SIZE
    next_cursor = (
        encode_cursor(secret=secret, scope=f"{view.page_id}#{scope}", item_key=served[-1].item_key) if more else None
    )
    return served, next_cursor


def incidents(view: PageView, cursor: str | None, *, settings: Settings) -> dict[str, Any]:
    items, next_cursor = _listing(view, INCIDENT_PREFIX, "incidents", cursor, settings=settings)
    return PublicIncidents(
        incidents=[public_incident(view, item) for item in items], next_cursor=next_cursor
    ).model_dump(mode="json")


def maintenance(view: PageView, cursor: str | None, *, settings: Settings) -> dict[str, Any]:
    items, next_cursor = _listing(view, MAINTENANCE_PREFIX, "maintenance", cursor, settings=settings)
    return PublicMaintenanceList(
        maintenance=[public_window(view, item) for item in items], next_cursor=next_cursor
    ).model_dump(mode="json")


def _newest(view: PageView, prefix: str) -> list[StatusPageItem]:
    return list(
        StatusPageItem.query(
            view.page_id, StatusPageItem.item_key.startswith(prefix), scan_index_forward=False, limit=feeds.FEED_SIZE
        )
    )


def history_feed(view: PageView, *, settings: Settings) -> feeds.Feed:
    """What history.atom and history.rss say: the newest incidents and windows (one Query each)."""
    page = view.structure.page
    about = feeds.FeedPage(
        page_id=page.page_id,
        name=page.name or "",
        url=public_url(page.slug or "", settings=settings),
        created_at=page.created_at,
        updated_at=page.updated_at,
    )
    windows = [(public_window(view, w), w.created_at or w.updated_at) for w in _newest(view, MAINTENANCE_PREFIX)]
    return feeds.build_feed(about, [public_incident(view, i) for i in _newest(view, INCIDENT_PREFIX)], windows)
