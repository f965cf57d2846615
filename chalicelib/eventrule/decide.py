"""The one call the alert pipeline makes: the decision of an organization's and an integration's
event rules for one alert."""

from __future__ import annotations

from chalicelib.eventrule.facts import AlertFacts, RuleDecision


def decide(*, organization_id: str, integration_id: str | None, facts: AlertFacts) -> RuleDecision:
    """Placeholder until the event rules land: no rule matches."""
    del organization_id, integration_id, facts
    return RuleDecision()
