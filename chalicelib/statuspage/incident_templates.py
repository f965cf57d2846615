"""Incident templates: prepared words (and component statuses) for the incidents a team posts often.

A template is one item in its page's partition (`TPL#<id>`): a name to pick it by, the incident
title, the update body, and optionally a status, an impact and component statuses. Naming one
(`template_id`) when opening a public incident or posting an update fills what the request
leaves out; what the request gives always wins, field by field (a request's component_statuses
replaces the template's whole map). A component the template names that has since been deleted is
left out rather than refused: the request did not name it. Templates are never public.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime
from types import EllipsisType
from typing import Any

from chalicelib.errors import Conflict, NotFound
from chalicelib.statuspage import rules
from chalicelib.statuspage.repository import get_item, require_structure, save_or_retry
from chalicelib.statuspage.structure import check_components
from chalicelib.statuspage.tables import TEMPLATE_COUNTER_KEY, TEMPLATE_PREFIX, StatusPageItem
from chalicelib.store import Transaction, TransactionCancelled, retry_on_conflict
from chalicelib.store.conditions import save_if

# What a template can fill: on a new incident, and on an update (an update has no title).
FOR_INCIDENT = ("title", "body", "status", "impact", "component_statuses")
FOR_UPDATE = ("body", "status", "impact", "component_statuses")
# Enough for every kind of incident a team posts; the console's picker and the list stay one short read.
MAX_TEMPLATES = 100


def template_values(item: StatusPageItem) -> dict[str, Any]:
    return {
        "title": item.title,
        "body": item.body,
        "status": item.status,
        "impact": item.impact,
        "component_statuses": dict(item.component_statuses or {}) or None,
    }


def fill(
    given: Mapping[str, Any], template: Mapping[str, Any], names: Collection[str], components: Collection[str]
) -> dict[str, Any]:
    """`given` with each of `names` it leaves out (None) taken from `template`, when the template has
    it. The template's component statuses keep only the ids in `components` (the page's now)."""
    filled = dict(given)
    for name in names:
        value = template.get(name)
        if filled.get(name) is not None or value is None:
            continue
        if name == "component_statuses":
            value = {c: status for c, status in value.items() if c in components} or None
        filled[name] = value
    return filled


def get_template(*, page_id: str, template_id: str) -> StatusPageItem:
    return get_item(page_id, TEMPLATE_PREFIX, template_id, "tpl", "Incident template")


def filled_from(
    *, page_id: str, template_id: str | None, names: Collection[str], components: Collection[str], **given: Any
) -> dict[str, Any]:
    """`given`, filled from the template `template_id` names (404 when the page has no such template)."""
    if template_id is None:
        return given
    template = get_template(page_id=page_id, template_id=template_id)
    return fill(given, template_values(template), names, components)


def _check_statuses(page_id: str, component_statuses: Mapping[str, str]) -> dict[str, str]:
    if component_statuses:
        check_components(require_structure(page_id), list(component_statuses), field="component_statuses")
    else:
        require_structure(page_id)
    return dict(component_statuses)


def create_template(
    *,
    page_id: str,
    name: str,
    title: str,
    body: str,
    now: datetime,
    status: str | None = None,
    impact: str | None = None,
    component_statuses: Mapping[str, str] | None = None,
) -> StatusPageItem:
    """One more template, in one transaction with the page's counter, which refuses the 101st however
    many creates race (a count read before the write let 30 racing creates make 101)."""
    statuses = _check_statuses(page_id, component_statuses or {})
    _count_existing_once(page_id)
    item = StatusPageItem(
        page_id,
        TEMPLATE_PREFIX + rules.new_id("tpl", now),
        name=name,
        title=title,
        body=body,
        status=status,
        impact=impact,
        component_statuses=statuses,
        created_at=now,
        updated_at=now,
    )
    unit = Transaction()
    unit.put("template", item, StatusPageItem.item_key.does_not_exist())
    unit.update(
        "counter",
        StatusPageItem(page_id, TEMPLATE_COUNTER_KEY),
        [StatusPageItem.template_count.add(1)],
        StatusPageItem.template_count < MAX_TEMPLATES,
        check_version=False,
    )
    try:
        unit.commit()
    except TransactionCancelled as cancelled:
        if "counter" in cancelled.failed:
            raise Conflict(f"A status page has at most {MAX_TEMPLATES} incident templates; delete one first.") from None
        raise Conflict("The template could not be created; retry.") from None
    return item


def _count_existing_once(page_id: str) -> None:
    """Start the page's counter at the templates it has (made before there was a counter); once:
    after that only creates and deletes move it."""
    counter = StatusPageItem(page_id, TEMPLATE_COUNTER_KEY)
    if StatusPageItem.count(page_id, StatusPageItem.item_key == TEMPLATE_COUNTER_KEY):
        return
    counter.template_count = _count(page_id)
    save_if(counter, StatusPageItem.item_key.does_not_exist())  # a racing first create counted them already


def _count(page_id: str) -> int:
    return StatusPageItem.count(page_id, StatusPageItem.item_key.startswith(TEMPLATE_PREFIX))


def list_templates(*, page_id: str) -> list[StatusPageItem]:
    """By name (case-insensitive), then creation order; one Query on the page's templates."""
    found = StatusPageItem.query(page_id, StatusPageItem.item_key.startswith(TEMPLATE_PREFIX))
    return sorted(found, key=lambda item: ((item.name or "").casefold(), item.item_key))


def update_template(
    *,
    page_id: str,
    template_id: str,
    now: datetime,
    name: str | EllipsisType = ...,
    title: str | EllipsisType = ...,
    body: str | EllipsisType = ...,
    status: str | EllipsisType | None = ...,
    impact: str | EllipsisType | None = ...,
    component_statuses: Mapping[str, str] | EllipsisType = ...,
) -> StatusPageItem:
    """Change only what is given; null clears status or impact, {} the component statuses."""
    statuses = _check_statuses(page_id, component_statuses) if component_statuses is not ... else None
    changes: dict[str, Any] = {
        field: value
        for field, value in (("name", name), ("title", title), ("body", body), ("status", status), ("impact", impact))
        if value is not ...
    }

    def attempt() -> StatusPageItem:
        item = get_template(page_id=page_id, template_id=template_id)
        for field, value in changes.items():
            setattr(item, field, value)
        if statuses is not None:
            item.component_statuses = statuses
        item.updated_at = now
        save_or_retry(item)
        return item

    return retry_on_conflict(attempt, what="incident template")


def delete_template(*, page_id: str, template_id: str) -> None:
    """Delete it and count it out, together (404 when it went in the meantime)."""
    template = get_template(page_id=page_id, template_id=template_id)
    _count_existing_once(page_id)
    unit = Transaction()
    unit.delete("template", template, StatusPageItem.item_key.exists(), check_version=False)
    unit.update(
        "counter",
        StatusPageItem(page_id, TEMPLATE_COUNTER_KEY),
        [StatusPageItem.template_count.add(-1)],
        StatusPageItem.template_count > 0,
        check_version=False,
    )
    try:
        unit.commit()
    except TransactionCancelled:
        raise NotFound("Incident template not found.") from None
