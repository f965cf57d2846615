"""The paging status an incident shows (chalicelib.incident.paging_status): the stored decision
read with the incident's own state; acknowledging or resolving stops it; older records read from
their escalation state alone."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from chalicelib.escalation.steps import EscalationPolicy, Level, Target, start, stop
from chalicelib.incident.paging_status import LABELS, PAGING_STATUSES, record, view_of
from chalicelib.incident.tables import IncidentRecord
from chalicelib.settings import get_settings

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
POLICY = EscalationPolicy("pol_1", "Checkout", (Level((Target("user", "usr_ana"),), 5),))


def incident(**fields: Any) -> IncidentRecord:
    values: dict[str, Any] = {"status": "new", "status_category": "triggered", **fields}
    return IncidentRecord("org#INC-2026-0001", organization_id="org", incident_number="INC-2026-0001", **values)


def running() -> dict[str, Any]:
    return start(POLICY, NOW, "token", settings=get_settings())[0].to_dict()


def exhausted() -> dict[str, Any]:
    return stop(start(POLICY, NOW, "token", settings=get_settings())[0]).to_dict()


NOBODY = record("nobody", reason="Service Quiet has no escalation policy.")
FALLBACK = record("fallback", reason="Level 1 reaches nobody.", level=1, fallback_contacts=["Cy Park"])


@pytest.mark.parametrize(
    ("fields", "status", "reason", "level"),
    [
        ({}, "pending", None, None),
        ({"escalation": running()}, "paging", None, None),  # stored before decisions were
        ({"escalation": exhausted()}, "paged", None, None),
        ({"escalation": running(), "paging": record("paging", level=1)}, "paging", None, 1),
        ({"escalation": exhausted(), "paging": record("paging", level=1)}, "paged", None, 1),
        ({"paging": NOBODY}, "nobody", "Service Quiet has no escalation policy.", None),
        ({"escalation": running(), "paging": FALLBACK}, "fallback", "Level 1 reaches nobody.", 1),
        ({"paging": NOBODY, "acknowledged_at": NOW}, "stopped", None, None),
        ({"paging": NOBODY, "status": "resolved", "status_category": "resolved"}, "stopped", None, None),
        ({"paging": {"status": "bogus"}}, "pending", None, None),
        ({"paging": {"status": "nobody", "level": "x"}}, "nobody", None, None),
    ],
)
def test_view_of(fields: dict[str, Any], status: str, reason: str | None, level: int | None) -> None:
    view = view_of(incident(**fields))
    assert (view.status, view.reason, view.level) == (status, reason, level)
    assert view.is_warning == (status in ("nobody", "fallback"))
    assert view.label == LABELS[status]


def test_fallback_names_the_contacts_paged() -> None:
    assert view_of(incident(paging=FALLBACK)).fallback_contacts == ("Cy Park",)
    assert view_of(incident(paging=NOBODY)).fallback_contacts == ()


def test_every_status_has_a_label() -> None:
    assert set(LABELS) == set(PAGING_STATUSES)
    assert record("paging", level=2) == {"status": "paging", "reason": None, "level": 2, "fallback_contacts": []}
