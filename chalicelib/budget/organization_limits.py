"""An organization's outbound limits: the deployment's values, lowered where its owner chose to
(GET/PATCH /api/v1/settings/limits). Stored on the organization item (`outbound_limits`:
{name: value}), written with its version checked; read once per request or queue message."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pynamodb.exceptions import DoesNotExist

from chalicelib.budget import limits
from chalicelib.budget.limits import LIMITS, Limit
from chalicelib.errors import Conflict, NotFound
from chalicelib.organization.tables import OrganizationRecord
from chalicelib.settings import Settings
from chalicelib.store import scope, update_if


@dataclass(frozen=True)
class LimitView:
    limit: Limit
    value: int  # in effect
    deployment_value: int
    window_seconds: int

    @property
    def lowered(self) -> bool:
        return self.value < self.deployment_value


def _stored(record: OrganizationRecord | None) -> dict[str, int]:
    stored = record.outbound_limits if record is not None and isinstance(record.outbound_limits, dict) else {}
    return {str(name): int(value) for name, value in stored.items() if name in limits.BY_NAME}


def _read(organization_id: str) -> dict[str, int]:
    try:
        return _stored(OrganizationRecord.get(organization_id))
    except DoesNotExist:
        return {}


def lowered(organization_id: str | None) -> dict[str, int]:
    """What the owner lowered ({} for none, or no organization)."""
    if not organization_id:
        return {}
    return scope.remembered(("outbound_limits", organization_id), lambda: _read(organization_id))


def in_effect(organization_id: str | None, *, settings: Settings) -> dict[str, int]:
    return limits.in_effect(limits.deployment_values(settings), lowered(organization_id))


def views(organization_id: str, *, settings: Settings) -> list[LimitView]:
    deployment = limits.deployment_values(settings)
    effective = limits.in_effect(deployment, lowered(organization_id))
    return [
        LimitView(limit, effective[limit.name], deployment[limit.name], limits.window_seconds(limit, settings))
        for limit in LIMITS
    ]


def lower(*, organization_id: str, changes: Mapping[str, int | None], settings: Settings) -> list[LimitView]:
    """Set the owner's values (None: back to the deployment's); a 400 for a value above the
    deployment's, below 1, or a limit no owner sets."""
    checked = limits.check_changes(changes, limits.deployment_values(settings))
    try:
        record = OrganizationRecord.get(organization_id, consistent_read=True)
    except DoesNotExist:
        raise NotFound("Organization not found.") from None
    stored = _stored(record)
    for name, value in checked.items():
        if value is None:
            stored.pop(name, None)
        else:
            stored[name] = value
    if not update_if(record, [OrganizationRecord.outbound_limits.set(stored or None)]):
        raise Conflict("The organization changed at the same time; retry.")
    scope.remember(("outbound_limits", organization_id), stored)
    return views(organization_id, settings=settings)
