"""Alerts: the list (the API's filters, 25 a page, newest first) and one alert with every field.

The list reads through `alert.listing.list_alerts` with the API's own `AlertListQuery`, and shows
each alert as the API's `AlertV1`, so a filter means what it means on GET /api/v1/alerts (scope
incidents:read, which every role has) and is refused with the same words. As on the incident
list, the time range is given as whole days in the viewer's zone (a date input); without one, the API's default
(the last 30 days) applies and the page says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from chalicelib.alert import listing, repository
from chalicelib.alert.models import DEFAULT_DAYS, AlertListQuery, AlertV1
from chalicelib.alert.tables import ALERT_STATUSES
from chalicelib.catalog import service as catalog
from chalicelib.console import list_links
from chalicelib.console.pages.incidents import day_bound
from chalicelib.console.visits import app_path
from chalicelib.console.web import ConsolePages, Ctx, Page
from chalicelib.errors import AppError, NotFound, ValidationFailed
from chalicelib.settings import Settings

console = ConsolePages(__name__)

LIST_LIMIT = 25
FILTERS = ("service_id", "status", "incident_number", "since", "until")
DAY_FILTERS = ("since", "until")


def filters_of(ctx: Ctx) -> dict[str, list[str]]:
    """The filters as the form sent them (blank values dropped), to redisplay and to carry into page links."""
    found: dict[str, list[str]] = {}
    for name in FILTERS:
        values = [value.strip() for value in ctx.query.get(name, []) if value.strip()]
        if values:
            found[name] = values if name == "status" else values[:1]
    if "incident_number" in found:
        found["incident_number"] = [found["incident_number"][0].upper()]  # as the incident page takes it
    return found


def list_query(ctx: Ctx, filters: dict[str, list[str]]) -> AlertListQuery:
    data: dict[str, Any] = {"limit": LIST_LIMIT, "offset": ctx.arg("offset") or 0}
    if "status" in filters:
        data["status"] = filters["status"]
    for name in ("service_id", "incident_number"):
        if name in filters:
            data[name] = filters[name][0]
    for name in DAY_FILTERS:
        if name in filters:
            data[name] = day_bound(name, filters[name][0], end_of_day=name == "until", zone=ctx.zone)
    return ctx.model(AlertListQuery, data)


def service_key_of(organization_id: str, query: AlertListQuery) -> str | None:
    """The service filter's key; an unknown service is refused as the API refuses it."""
    if not query.service_id:
        return None
    found = catalog.find_service(organization_id=organization_id, service_ref=query.service_id)
    if found is None:
        raise ValidationFailed.for_field("service_id", "no such service in this organization")
    return found.service_key


def page_link(filters: dict[str, list[str]], offset: int, *, settings: Settings) -> str:
    pairs = [(name, value) for name, values in filters.items() for value in values]
    return list_links.page_link(app_path("/alerts", settings=settings), pairs, offset)


def suppressed_reason(suppressed_by: Mapping[str, Any] | None) -> str:
    """Why an alert is suppressed, in words: the maintenance window or the event rules."""
    if not suppressed_by:
        return ""
    if suppressed_by.get("kind") == "maintenance":
        return f"maintenance window {suppressed_by.get('window_id') or '(unknown)'}"
    if suppressed_by.get("kind") == "event_rule":
        rule_ids = [str(rule) for rule in suppressed_by.get("rule_ids") or [suppressed_by.get("rule_id")] if rule]
        noun = "event rule" if len(rule_ids) == 1 else "event rules"
        return f"{noun} {', '.join(rule_ids)}" if rule_ids else "an event rule"
    return str(suppressed_by.get("kind") or "unknown")


def safe_link(url: str | None) -> str | None:
    """A source's link, only when it is http(s): a `javascript:` URL from a webhook never becomes a link."""
    if url and urlsplit(url).scheme.lower() in ("http", "https"):
        return url
    return None


def _service_names(organization_id: str) -> dict[str, str]:
    return {svc.service_key: svc.name for svc in catalog.list_services(organization_id=organization_id)}


@console.page("/alerts")
def alert_list(ctx: Ctx) -> Page:
    """The alert list: newest first, filtered as the API's list."""
    organization_id = ctx.organization_id
    filters = filters_of(ctx)
    names = _service_names(organization_id)
    context: dict[str, Any] = {
        "filters": filters,
        "statuses": ALERT_STATUSES,
        "services": sorted(names.items(), key=lambda item: item[1].lower()),
        "service_names": names,
        "alerts": [],
        "reason": suppressed_reason,
        "default_days": DEFAULT_DAYS,
        "total": 0,
        "first": 0,
        "newer_link": None,
        "older_link": None,
        "filter_problem": None,
        "filter_fields": [],
    }
    try:
        query = list_query(ctx, filters)
        service_key = service_key_of(organization_id, query)
        found = listing.list_alerts(organization_id=organization_id, query=query, service_key=service_key, now=ctx.now)
    except AppError as problem:
        if problem.status != 400:
            raise
        details = problem.details if isinstance(problem.details, dict) else {}
        # status.0 -> status: a ticked box's problem shows by the boxes.
        fields = [{**item, "field": str(item.get("field", "")).split(".")[0]} for item in details.get("fields") or []]
        context.update(filter_problem=problem.message, filter_fields=fields)
        return Page("console/alerts/list.html", "Alerts", section="alerts", context=context, status=400)
    context.update(
        alerts=[AlertV1.of(record) for record in found.items],
        total=found.total,
        first=query.offset + 1,
        newer_link=page_link(filters, max(query.offset - LIST_LIMIT, 0), settings=ctx.settings)
        if query.offset
        else None,
        older_link=page_link(filters, found.next_offset, settings=ctx.settings)
        if found.next_offset is not None
        else None,
    )
    return Page("console/alerts/list.html", "Alerts", section="alerts", context=context)


@console.page("/alerts/{alert_id}")
def show_alert(ctx: Ctx) -> Page:
    """One alert with every field, as GET /api/v1/alerts/{id} answers it."""
    alert_id = ctx.path["alert_id"]
    record = repository.get_alert(ctx.organization_id, alert_id) if alert_id.startswith("alr_") else None
    if record is None:
        raise NotFound(f"Alert {alert_id[:64]} was not found.")
    alert = AlertV1.of(record)
    service = catalog.find_service(organization_id=ctx.organization_id, service_ref=alert.service_key)
    return Page(
        "console/alerts/alert.html",
        f"Alert: {alert.title}",
        section="alerts",
        context={
            "alert": alert,
            "service_name": service.name if service else alert.service_key,
            "reason": suppressed_reason(alert.suppressed_by),
            "source_link": safe_link(alert.source_url),
        },
    )
