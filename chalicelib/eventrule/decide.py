"""The one call the alert pipeline makes: the decision of an organization's and an integration's
event rules for one alert.

Cost per event: one BatchGetItem of at most two keys (the integration's list and the
organization's, each one item), never a Query; then the pure `evaluate` (semantics in
eventrule.evaluate's docstring and docs/NOISE_CONTROL.md, "Event rules"), on the monotonic clock and within
its time budget. A decision past the budget (no rule applied) is logged here as a warning and
carries it in `RuleDecision.warnings` for the caller to show.
"""

from __future__ import annotations

import logging
import time

from chalicelib.eventrule.evaluate import Clock, evaluate
from chalicelib.eventrule.facts import AlertFacts, RuleDecision
from chalicelib.eventrule.service import rule_sets_for

logger = logging.getLogger("tocsin.eventrule")


def decide(
    *, organization_id: str, integration_id: str | None, facts: AlertFacts, clock: Clock = time.monotonic
) -> RuleDecision:
    """The rules' decision for one alert; `integration_id` None (a heartbeat) applies only the
    organization's list."""
    rule_sets = rule_sets_for(organization_id=organization_id, integration_id=integration_id)
    decision = evaluate(rule_sets, facts, clock=clock)
    for warning in decision.warnings:
        logger.warning(
            "event rules over their time budget",
            extra={"organization_id": organization_id, "integration_id": integration_id, "warning": warning},
        )
    return decision
