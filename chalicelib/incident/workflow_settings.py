"""An organization's incident workflow and SLA settings: stored on the organization, cached briefly.

Reads are cached in-process for CACHE_SECONDS so incident writes do not pay a GetItem each;
a change made through this process is visible at once, other Lambda instances see it within
CACHE_SECONDS.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from pynamodb.exceptions import DoesNotExist

from chalicelib.errors import Conflict, NotFound
from chalicelib.incident.sla import DEFAULT_SLA_SETTINGS, SlaSettings
from chalicelib.incident.workflow import DEFAULT_WORKFLOW, Workflow
from chalicelib.organization.tables import OrganizationRecord
from chalicelib.store import update_if

CACHE_SECONDS = 30.0


@dataclass(frozen=True)
class IncidentSettings:
    organization_name: str
    workflow: Workflow
    sla: SlaSettings


_cache: dict[str, tuple[float, IncidentSettings]] = {}
_lock = threading.Lock()


def _from_record(record: OrganizationRecord) -> IncidentSettings:
    return IncidentSettings(
        organization_name=record.name,
        workflow=Workflow.from_dict(record.workflow) if record.workflow else DEFAULT_WORKFLOW,
        sla=SlaSettings.from_dict(record.sla_settings) if record.sla_settings else DEFAULT_SLA_SETTINGS,
    )


def _load(organization_id: str) -> OrganizationRecord:
    try:
        return OrganizationRecord.get(organization_id, consistent_read=True)
    except DoesNotExist:
        raise NotFound("Organization not found.") from None


def incident_settings(*, organization_id: str) -> IncidentSettings:
    cached = _cache.get(organization_id)
    if cached is not None and cached[0] > time.monotonic():
        return cached[1]
    settings = _from_record(_load(organization_id))
    with _lock:
        _cache[organization_id] = (time.monotonic() + CACHE_SECONDS, settings)
    return settings


def forget(organization_id: str | None = None) -> None:
    with _lock:
        if organization_id is None:
            _cache.clear()
        else:
            _cache.pop(organization_id, None)


def save_workflow(*, organization_id: str, workflow: Workflow) -> IncidentSettings:
    record = _load(organization_id)
    if not update_if(record, [OrganizationRecord.workflow.set(workflow.to_dict())]):
        raise Conflict("The organization changed at the same time; retry.")
    forget(organization_id)
    return _from_record(record)


def save_sla_settings(*, organization_id: str, sla: SlaSettings) -> IncidentSettings:
    record = _load(organization_id)
    if not update_if(record, [OrganizationRecord.sla_settings.set(sla.to_dict())]):
        raise Conflict("The organization changed at the same time; retry.")
    forget(organization_id)
    return _from_record(record)
