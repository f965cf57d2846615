"""GET /api/v1/insights/responders: the reads behind responder load.

The person items of the range (one Query per month), the organization's schedules (one Query)
and their final shifts over the range (computed: overrides and swaps included), the people named
(one BatchGetItem per 100). Shifts come from the schedules as they are now: overrides that ended
more than 30 days ago are pruned by the schedule's writes (docs/INSIGHTS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from chalicelib import zones
from chalicelib.directory import teams as directory_teams
from chalicelib.directory.users import get_users
from chalicelib.errors import ValidationFailed
from chalicelib.insights import reading, responder_load, rollups
from chalicelib.insights.models import ResponderInsightsQuery
from chalicelib.insights.responder_load import Interval, Person
from chalicelib.insights.service import bands_of, span_of, zone_of
from chalicelib.oncall.rotation import final_shifts
from chalicelib.oncall.service import list_schedules


def _members(organization_id: str, team_ids: Sequence[str]) -> set[str]:
    teams = directory_teams.get_teams(organization_id=organization_id, team_ids=list(team_ids))
    unknown = [team_id for team_id in team_ids if team_id not in teams]
    if unknown:
        raise ValidationFailed.for_field("team_ids", f"unknown teams: {', '.join(unknown)}")
    return {member for team in teams.values() for member in team.member_ids}


def responder_insights(*, organization_id: str, query: ResponderInsightsQuery, now: datetime) -> dict[str, Any]:
    organization_zone = zone_of(organization_id, query.time_zone)
    span = span_of(query, now)
    wanted: set[str] | None = None
    if query.team_ids:
        wanted = _members(organization_id, query.team_ids)
    if query.user_ids:
        wanted = set(query.user_ids) if wanted is None else wanted & set(query.user_ids)
    items = [
        item
        for item in reading.hour_items(organization_id, rollups.PERSON, span)
        if wanted is None or item.value in wanted
    ]
    shifts: dict[str, list[Interval]] = {}
    for stored in list_schedules(organization_id=organization_id):
        for shift in final_shifts(stored.schedule, span.since, span.until):
            if wanted is None or shift.user_id in wanted:
                shifts.setdefault(shift.user_id, []).append((shift.start, shift.end))
    ids = list(dict.fromkeys([*(item.value for item in items), *shifts]))
    users = get_users(organization_id=organization_id, user_ids=ids)
    people = {
        user_id: Person(user_id, user.name, user.email, zones.zone_or_default(user.time_zone or organization_zone))
        for user_id, user in users.items()
    }
    return responder_load.compute(span, people, items, shifts, bands_of(organization_id))
