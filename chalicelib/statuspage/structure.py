"""Sections, component groups (in a section) and components (in a section, optionally in a group).

Every item lives in its page's partition. Writes are conditional on the item's version
(PynamoDB adds the condition), so a racing change is a retry, never a lost update.
"""

from __future__ import annotations

from datetime import datetime
from types import EllipsisType

from chalicelib.errors import Conflict, ValidationFailed
from chalicelib.statuspage import history, rules
from chalicelib.statuspage.pages import delete_item
from chalicelib.statuspage.repository import (
    Structure,
    get_item,
    item_id,
    require_structure,
    save_or_retry,
)
from chalicelib.statuspage.tables import COMPONENT_PREFIX, GROUP_PREFIX, SECTION_PREFIX, StatusPageItem
from chalicelib.store import RetryableConflict, retry_on_conflict


def _create(item: StatusPageItem) -> None:
    """A new item under a fresh random id (conditional on its absence)."""
    try:
        save_or_retry(item)
    except RetryableConflict:
        raise Conflict("The item could not be created; retry.") from None


def _check_section(structure: Structure, section_id: str, field: str = "section_id") -> None:
    if section_id not in {item_id(s) for s in structure.sections}:
        raise ValidationFailed.for_field(field, "no such section on this status page")


def _check_group(structure: Structure, group_id: str, section_id: str) -> None:
    group = next((g for g in structure.groups if item_id(g) == group_id), None)
    if group is None:
        raise ValidationFailed.for_field("group_id", "no such component group on this status page")
    if group.section_id != section_id:
        raise ValidationFailed.for_field("group_id", "the group belongs to another section")


def create_section(*, page_id: str, name: str, now: datetime) -> StatusPageItem:
    require_structure(page_id)
    section_id = rules.new_id("sec", now)
    item = StatusPageItem(page_id, SECTION_PREFIX + section_id, name=name, created_at=now, updated_at=now)
    _create(item)
    return item


def create_group(*, page_id: str, section_id: str, name: str, now: datetime) -> StatusPageItem:
    _check_section(require_structure(page_id), section_id)
    group_id = rules.new_id("grp", now)
    item = StatusPageItem(
        page_id, GROUP_PREFIX + group_id, name=name, section_id=section_id, created_at=now, updated_at=now
    )
    _create(item)
    return item


def create_component(
    *, page_id: str, section_id: str, group_id: str | None, name: str, status: str, now: datetime
) -> StatusPageItem:
    structure = require_structure(page_id)
    _check_section(structure, section_id)
    if group_id is not None:
        _check_group(structure, group_id, section_id)
    component_id = rules.new_id("cmp", now)
    item = StatusPageItem(
        page_id,
        COMPONENT_PREFIX + component_id,
        name=name,
        section_id=section_id,
        group_id=group_id,
        status=status,
        created_at=now,
        updated_at=now,
    )
    # Its first status is history too: the uptime counts from here (a fresh random id, so only
    # a duplicate delivery of this very write can fail).
    if not history.save_with_history(
        item, [history.status_change(page_id, component_id, previous=None, status=status, now=now)]
    ):
        raise Conflict("The item could not be created; retry.")
    return item


def rename(
    *, page_id: str, prefix: str, item_id_: str, id_prefix: str, what: str, name: str, now: datetime
) -> StatusPageItem:
    """Rename a section or a group."""

    def attempt() -> StatusPageItem:
        item = get_item(page_id, prefix, item_id_, id_prefix, what)
        item.name = name
        item.updated_at = now
        save_or_retry(item)
        return item

    return retry_on_conflict(attempt, what=what.lower())


def rename_section(*, page_id: str, section_id: str, name: str, now: datetime) -> StatusPageItem:
    return rename(
        page_id=page_id, prefix=SECTION_PREFIX, item_id_=section_id, id_prefix="sec", what="Section", name=name, now=now
    )


def rename_group(*, page_id: str, group_id: str, name: str, now: datetime) -> StatusPageItem:
    return rename(
        page_id=page_id,
        prefix=GROUP_PREFIX,
        item_id_=group_id,
        id_prefix="grp",
        what="Component group",
        name=name,
        now=now,
    )


def update_component(
    *,
    page_id: str,
    component_id: str,
    now: datetime,
    name: str | EllipsisType = ...,
    status: str | EllipsisType = ...,
    section_id: str | EllipsisType = ...,
    group_id: str | EllipsisType | None = ...,
) -> StatusPageItem:
    """Change only what is given. A status change stamps updated_at (the public "last changed");
    moving to another section leaves the group unless a group in that section is given."""
    structure = require_structure(page_id) if section_id is not ... or group_id is not ... else None

    def attempt() -> StatusPageItem:
        item = get_item(page_id, COMPONENT_PREFIX, component_id, "cmp", "Component")
        changes = []
        if name is not ...:
            item.name = name
        if status is not ... and status != item.status:
            changes.append(history.status_change(page_id, component_id, previous=item.status, status=status, now=now))
            item.status = status
        if section_id is not ... and section_id != item.section_id:
            item.section_id = section_id
            if group_id is ...:
                item.group_id = None
        if group_id is not ...:
            item.group_id = group_id
        if structure is not None:
            _check_section(structure, item.section_id or "")
            if item.group_id is not None:
                _check_group(structure, item.group_id, item.section_id or "")
        item.updated_at = now
        if not history.save_with_history(item, changes):  # the status and its history: one transaction
            raise RetryableConflict()
        return item

    return retry_on_conflict(attempt, what="component")


def delete_section(*, page_id: str, section_id: str) -> None:
    """Only an empty section can go (409 while groups or components are in it)."""
    item = get_item(page_id, SECTION_PREFIX, section_id, "sec", "Section")
    structure = require_structure(page_id)
    if any(g.section_id == section_id for g in structure.groups + structure.components):
        raise Conflict("The section still holds groups or components; move or delete them first.")
    delete_item(item, "Section")


def delete_group(*, page_id: str, group_id: str) -> None:
    """Only an empty group can go (409 while components are in it)."""
    item = get_item(page_id, GROUP_PREFIX, group_id, "grp", "Component group")
    if any(c.group_id == group_id for c in require_structure(page_id).components):
        raise Conflict("The group still holds components; move or delete them first.")
    delete_item(item, "Component group")


def delete_component(*, page_id: str, component_id: str) -> None:
    """Incidents and windows naming it stop listing it (names are resolved when read)."""
    delete_item(get_item(page_id, COMPONENT_PREFIX, component_id, "cmp", "Component"), "Component")


def list_structure(*, page_id: str) -> Structure:
    return require_structure(page_id)


def check_components(structure: Structure, component_ids: list[str], field: str = "component_ids") -> list[str]:
    """The ids, deduplicated in order; 400 naming the first that is not a component of the page."""
    known = {item_id(c) for c in structure.components}
    unique = list(dict.fromkeys(component_ids))
    for index, component_id in enumerate(unique):
        if component_id not in known:
            raise ValidationFailed.for_field(f"{field}.{index}", "no such component on this status page")
    return unique
