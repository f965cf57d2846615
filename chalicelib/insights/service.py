"""Insights use cases: what a request asks, the rollups it reads, the figures it answers.

Every read is a GetItem or a Query: the organization (its zone and bands), the rollup partitions
of the range (one Query per month and dimension kind), and the names of what is grouped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from chalicelib import zones
from chalicelib.catalog import service as catalog
from chalicelib.directory import teams as directory_teams
from chalicelib.errors import InvalidSeverity, ValidationFailed
from chalicelib.insights import incident_metrics, noisy_alerts, periods, reading, rollups
from chalicelib.insights.bands import Bands, bands_from
from chalicelib.insights.models import AlertInsightsQuery, IncidentInsightsQuery, RangeQuery
from chalicelib.organization.service import check_time_zone, get_organization
from chalicelib.organization.tables import OrganizationRecord
from chalicelib.severity import parse_severity
from chalicelib.store import update_unversioned_if


def set_bands(*, organization_id: str, bands: Mapping[str, Any]) -> Bands:
    """Store the organization's bands (what is left out takes its default); 400 when invalid.
    The organization's version is left alone: the bands change nothing its other settings read."""
    stored = {key: value for key, value in bands.items() if value is not None}
    checked = bands_from(stored)
    record = OrganizationRecord(organization_id)
    update_unversioned_if(
        record, [OrganizationRecord.insights_bands.set(stored)], OrganizationRecord.organization_id.exists()
    )
    return checked


def bands_of(organization_id: str) -> Bands:
    found = OrganizationRecord.batch_get([organization_id], attributes_to_get=["organization_id", "insights_bands"])
    stored = next((record.insights_bands for record in found), None)
    return bands_from(stored)


def zone_of(organization_id: str, asked: str | None) -> str:
    if asked is not None:
        return check_time_zone(asked)
    return zones.zone_or_default(get_organization(organization_id=organization_id).time_zone)


def span_of(query: RangeQuery, now: datetime) -> periods.Range:
    return periods.checked_range(query.since, query.until, now)


def _service_keys(organization_id: str, refs: Sequence[str]) -> frozenset[str]:
    found = catalog.services_by_ref(organization_id=organization_id, service_refs=list(refs))
    unknown = [ref for ref in refs if ref not in found]
    if unknown:
        raise ValidationFailed.for_field("service_ids", f"unknown services: {', '.join(unknown)}")
    return frozenset(found[ref].service_key for ref in refs)


def _severities(values: Sequence[str]) -> frozenset[str]:
    try:
        return frozenset(parse_severity(value) for value in values)
    except InvalidSeverity as error:
        raise ValidationFailed.for_field("severities", "each must be one of SEV1 to SEV5") from error


def _names(organization_id: str, kind: str, values: set[str]) -> dict[str, str]:
    wanted = sorted(value for value in values if value != rollups.NO_VALUE)
    if not wanted:
        return {}
    if kind == rollups.SERVICE:
        services = catalog.get_services(organization_id=organization_id, service_keys=wanted)
        return {key: service.name for key, service in services.items()}
    if kind == rollups.TEAM:
        teams = directory_teams.get_teams(organization_id=organization_id, team_ids=wanted)
        return {key: team.name for key, team in teams.items()}
    return {}


def incident_insights(*, organization_id: str, query: IncidentInsightsQuery, now: datetime) -> dict[str, Any]:
    zone = zone_of(organization_id, query.time_zone)
    span = span_of(query, now)
    filters: dict[str, frozenset[str]] = {}
    if query.service_ids:
        filters[rollups.SERVICE] = _service_keys(organization_id, query.service_ids)
    if query.team_ids:
        filters[rollups.TEAM] = frozenset(query.team_ids)
    if query.severities:
        filters[rollups.SEVERITY] = _severities(query.severities)
    if query.urgency:
        filters[rollups.URGENCY] = frozenset(query.urgency)
    spec = incident_metrics.IncidentQuery(span, zone, query.interval, query.group_by, filters)
    kind = spec.kind_to_read()
    items = reading.hour_items(organization_id, kind, span)
    names: dict[str, str] = {}
    if query.group_by in (rollups.SERVICE, rollups.TEAM):
        values = {incident_metrics.dimensions_of(kind, item.value).get(query.group_by, "") for item in items}
        names = _names(organization_id, query.group_by, values)
    return incident_metrics.compute(spec, kind, items, bands_of(organization_id), names)


def alert_insights(*, organization_id: str, query: AlertInsightsQuery, now: datetime) -> dict[str, Any]:
    if query.flap_minutes not in noisy_alerts.FLAP_MINUTES:
        allowed = ", ".join(str(m) for m in noisy_alerts.FLAP_MINUTES[:16])
        raise ValidationFailed.for_field("flap_minutes", f"must be one of {allowed}, ...")
    span = span_of(query, now)
    kinds = (rollups.ALERT_SOURCE, rollups.ALERT_SERVICE, rollups.ALERT_KEY)
    items = {kind: reading.hour_items(organization_id, kind, span) for kind in kinds}
    service_keys = {item.value for item in items[rollups.ALERT_SERVICE]}
    names = _names(organization_id, rollups.SERVICE, service_keys)
    return noisy_alerts.compute(span, items, flap_minutes=query.flap_minutes, limit=query.limit, service_names=names)
