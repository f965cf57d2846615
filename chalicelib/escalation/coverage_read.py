"""Coverage gaps of loaded escalation policies: the schedules they target and the people, read in
two BatchGets for all of them (then chalicelib.escalation.coverage's pure rules)."""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.escalation.coverage import PolicyGap, policy_gaps
from chalicelib.escalation.steps import EscalationPolicy
from chalicelib.oncall.coverage_read import load_gaps
from chalicelib.oncall.intervals import Span
from chalicelib.oncall.service import get_schedules


def policies_gaps(
    *, organization_id: str, policies: Sequence[EscalationPolicy], window: Span
) -> dict[str, list[PolicyGap]]:
    """policy_id -> the spans of `window` in which one of its levels reaches nobody."""
    targets = [target for policy in policies for level in policy.levels for target in level.targets]
    schedule_ids = [target.id for target in targets if target.kind == "schedule"]
    stored = get_schedules(organization_id=organization_id, schedule_ids=schedule_ids) if schedule_ids else {}
    loaded = load_gaps(
        organization_id=organization_id,
        schedules=[found.schedule for found in stored.values()],
        window=window,
        more_people=[target.id for target in targets if target.kind == "user"],
    )
    return {policy.policy_id: policy_gaps(policy, window, loaded.gaps, loaded.can_page) for policy in policies}
