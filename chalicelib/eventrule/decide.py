"""The one call the alert pipeline makes: the decision of an organization's and an integration's
event rules for one alert.

Cost per event: one BatchGetItem of at most two keys (the integration's list and the
organization's, each one item), never a Query; then the pure `evaluate` (semantics in
eventrule.evaluate's docstring and the README's "Event rules").
"""

from __future__ import annotations

from chalicelib.eventrule.evaluate import evaluate
from chalicelib.eventrule.facts import AlertFacts, RuleDecision
from chalicelib.eventrule.service import rule_sets_for


def decide(*, organization_id: str, integration_id: str | None, facts: AlertFacts) -> RuleDecision:
    """The rules' decision for one alert; `integration_id` None (a heartbeat) applies only the
    organization's list."""
    return evaluate(rule_sets_for(organization_id=organization_id, integration_id=integration_id), facts)
