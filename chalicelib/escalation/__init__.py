"""Escalation: policies (levels of targets with delays, a repeat count) and the per-incident state.

`steps` is pure: time is passed in and timers are data (`next_at`, a token the SQS message
carries, `delay_seconds` capped at SQS's 900 s); the service layer stores the state and sends.
"""

from chalicelib.escalation.steps import (
    EscalationPolicy,
    EscalationState,
    Level,
    Step,
    Target,
    advance,
    current_and_next_level,
    delay_seconds,
    escalate_now,
    start,
    stop,
    validate_policy,
)

__all__ = [
    "EscalationPolicy",
    "EscalationState",
    "Level",
    "Step",
    "Target",
    "advance",
    "current_and_next_level",
    "delay_seconds",
    "escalate_now",
    "start",
    "stop",
    "validate_policy",
]
