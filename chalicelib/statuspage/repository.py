"""Reading a page's items: the page itself (checked against the caller's organization), its
structure in one Query, and the active items in one index Query."""

from __future__ import annotations

from dataclasses import dataclass, field

from pynamodb.exceptions import DoesNotExist

from chalicelib.errors import NotFound
from chalicelib.statuspage import rules
from chalicelib.statuspage.tables import (
    COMPONENT_PREFIX,
    GROUP_PREFIX,
    INCIDENT_PREFIX,
    MAINTENANCE_PREFIX,
    PAGE_KEY,
    SECTION_PREFIX,
    STRUCTURE_PREFIX,
    StatusPageItem,
    slug_partition,
)
from chalicelib.statuspage.tables import SLUG_KEY as SLUG_SORT_KEY
from chalicelib.store import RetryableConflict, save_if


def page_not_found() -> NotFound:
    return NotFound("Status page not found.")


@dataclass
class Structure:
    """A page and everything under it that the public components view needs, in creation order."""

    page: StatusPageItem
    sections: list[StatusPageItem] = field(default_factory=list)
    groups: list[StatusPageItem] = field(default_factory=list)
    components: list[StatusPageItem] = field(default_factory=list)

    def component_names(self) -> dict[str, str]:
        return {item_id(c): c.name or "" for c in self.components}


def item_id(item: StatusPageItem) -> str:
    """The public id of an item (the last segment of its sort key)."""
    return item.item_key.rsplit("#", 1)[-1]


def get_page(*, organization_id: str, page_id: str, consistent: bool = False) -> StatusPageItem:
    """The page item, or 404 when it is unknown or belongs to another organization."""
    if not rules.is_id(page_id, "page"):
        raise page_not_found()
    try:
        page = StatusPageItem.get(page_id, PAGE_KEY, consistent_read=consistent)
    except DoesNotExist:
        raise page_not_found() from None
    if page.organization_id != organization_id:
        raise page_not_found()
    return page


def page_id_for_slug(slug: str) -> str | None:
    if not rules.SLUG_PATTERN.match(slug):
        return None
    try:
        guard = StatusPageItem.get(slug_partition(slug), SLUG_SORT_KEY)
    except DoesNotExist:
        return None
    return guard.owner_page_id


def load_structure(page_id: str) -> Structure | None:
    """The page, sections, groups and components: one Query. None when the page is gone."""
    found = list(StatusPageItem.query(page_id, StatusPageItem.item_key.startswith(STRUCTURE_PREFIX)))
    page = next((item for item in found if item.item_key == PAGE_KEY), None)
    if page is None:
        return None
    structure = Structure(page)
    for item in found:  # sort keys ascend and ids sort by creation time: creation order
        if item.item_key.startswith(SECTION_PREFIX):
            structure.sections.append(item)
        elif item.item_key.startswith(GROUP_PREFIX):
            structure.groups.append(item)
        elif item.item_key.startswith(COMPONENT_PREFIX):
            structure.components.append(item)
    return structure


def load_active(page_id: str) -> tuple[list[StatusPageItem], list[StatusPageItem]]:
    """(active incidents, in-progress maintenance windows), newest first: one index Query."""
    incidents: list[StatusPageItem] = []
    windows: list[StatusPageItem] = []
    for item in StatusPageItem.active_index.query(page_id, scan_index_forward=False):
        if item.item_key.startswith(INCIDENT_PREFIX):
            incidents.append(item)
        elif item.item_key.startswith(MAINTENANCE_PREFIX):
            windows.append(item)
    return incidents, windows


def get_item(page_id: str, prefix: str, item_id_: str, id_prefix: str, what: str) -> StatusPageItem:
    if not rules.is_id(item_id_, id_prefix):
        raise NotFound(f"{what} not found.")
    try:
        return StatusPageItem.get(page_id, prefix + item_id_, consistent_read=True)
    except DoesNotExist:
        raise NotFound(f"{what} not found.") from None


def require_structure(page_id: str) -> Structure:
    """The page's structure, or 404."""
    structure = load_structure(page_id)
    if structure is None:
        raise page_not_found()
    return structure


def save_or_retry(item: StatusPageItem) -> None:
    """Conditional on the version read: a racing writer makes it a retry (inside `retrying`)."""
    if not save_if(item):
        raise RetryableConflict()
