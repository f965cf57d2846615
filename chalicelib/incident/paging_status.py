"""Is anyone being paged about this incident? The `paging` field of the incident detail and the
console's warning (docs/PAGING.md).

The escalation worker (chalicelib.paging) records each decision on the incident item, in the same
version-checked commit as the escalation state: `record(...)` builds what it stores. `view_of`
reads it back together with the incident's own state, so acknowledging or resolving (which never
touch `paging`) show at once. Pure: no I/O.

Statuses, a small closed set:
- `pending`: not decided yet (the worker begins escalating moments after the incident opens);
- `paging`: the escalation's current level reached at least one person;
- `paged`: every level was paged and the policy ran out of levels and repeats unacknowledged;
- `fallback`: the escalation reached nobody; the organization's fallback contacts were paged;
- `nobody`: nobody was paged; `reason` says why;
- `stopped`: acknowledged or resolved, so nobody is paged any more.
`reason` is set for `fallback` and `nobody` only. Pages of an assignee or a manual page are not
escalation and do not change the status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from chalicelib.escalation.steps import EscalationState
from chalicelib.incident.tables import IncidentRecord
from chalicelib.incident.workflow import DONE_CATEGORIES

PagingStatus = Literal["pending", "paging", "paged", "fallback", "nobody", "stopped"]
PAGING_STATUSES: Final[tuple[PagingStatus, ...]] = ("pending", "paging", "paged", "fallback", "nobody", "stopped")
# What the worker stores; the other statuses follow from the incident itself.
Decided = Literal["paging", "fallback", "nobody"]
WARNING_STATUSES: Final[frozenset[str]] = frozenset({"fallback", "nobody"})
# How the console says each status.
LABELS: Final[dict[str, str]] = {
    "pending": "Starting",
    "paging": "Paging",
    "paged": "Every level paged; the escalation ended unacknowledged",
    "fallback": "Fallback contacts paged",
    "nobody": "Nobody",
    "stopped": "Stopped (acknowledged or resolved)",
}


@dataclass(frozen=True)
class PagingView:
    status: PagingStatus
    reason: str | None = None
    level: int | None = None  # the escalation level the decision was about; None without a policy
    fallback_contacts: tuple[str, ...] = ()  # names of the fallback contacts paged

    @property
    def label(self) -> str:
        return LABELS[self.status]

    @property
    def is_warning(self) -> bool:
        """Nobody the escalation policy names is being paged: the console shows it in red."""
        return self.status in WARNING_STATUSES


def record(
    status: Decided, *, reason: str | None = None, level: int | None = None, fallback_contacts: list[str] | None = None
) -> dict[str, Any]:
    """The stored decision (IncidentRecord.paging)."""
    return {"status": status, "reason": reason, "level": level, "fallback_contacts": list(fallback_contacts or [])}


def _escalation_exhausted(incident: IncidentRecord) -> bool:
    if not incident.escalation:
        return False
    return EscalationState.from_dict(incident.escalation).stopped


def view_of(incident: IncidentRecord) -> PagingView:
    if incident.acknowledged_at is not None or incident.status_category in DONE_CATEGORIES:
        return PagingView("stopped")
    stored = incident.paging
    if not isinstance(stored, dict) or stored.get("status") not in ("paging", "fallback", "nobody"):
        if not incident.escalation:
            return PagingView("pending")
        # Stored before decisions were recorded: the escalation state alone.
        return PagingView("paged" if _escalation_exhausted(incident) else "paging")
    level = stored.get("level") if isinstance(stored.get("level"), int) else None
    if stored["status"] == "paging":
        return PagingView("paged" if _escalation_exhausted(incident) else "paging", level=level)
    contacts = tuple(str(name) for name in stored.get("fallback_contacts") or [])
    reason = str(stored.get("reason") or "") or None
    return PagingView(stored["status"], reason=reason, level=level, fallback_contacts=contacts)
