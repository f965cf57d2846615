"""Incident severities: SEV0 (worst) to SEV4. Pure; no I/O."""

from __future__ import annotations

from typing import Literal

from chalicelib.errors import InvalidSeverity

Severity = Literal["SEV0", "SEV1", "SEV2", "SEV3", "SEV4"]
Urgency = Literal["high", "low"]

SEVERITIES: tuple[Severity, ...] = ("SEV0", "SEV1", "SEV2", "SEV3", "SEV4")
DEFAULT_SEVERITY: Severity = "SEV3"
HIGH_URGENCY_SEVERITIES: frozenset[Severity] = frozenset({"SEV0", "SEV1"})


def is_severity(value: object) -> bool:
    """True for an exact canonical severity name (no normalisation)."""
    return isinstance(value, str) and value in SEVERITIES


def parse_severity(value: object) -> Severity:
    """The canonical severity for `value`, or InvalidSeverity.

    Surrounding whitespace and letter case are forgiven (" sev2 " -> "SEV2"); anything
    that is not one of the five names, including non-strings, is refused.
    """
    if isinstance(value, str):
        candidate = value.strip().upper()
        if candidate in SEVERITIES:
            return candidate
    raise InvalidSeverity(
        f"Severity must be one of {', '.join(SEVERITIES)}; got {value!r}.",
        details={"allowed": list(SEVERITIES)},
    )


def severity_or_default(value: object | None, default: object | None = None) -> Severity:
    """`value` parsed when given, else `default` (a service's default_severity) when set, else SEV3."""
    if value is not None:
        return parse_severity(value)
    if default is not None:
        return parse_severity(default)
    return DEFAULT_SEVERITY


def rank(severity: str) -> int:
    """0 for SEV0 (most severe) to 4 for SEV4; for sorting."""
    return SEVERITIES.index(parse_severity(severity))


def urgency(severity: str) -> Urgency:
    """Notification urgency: SEV0 and SEV1 page as high urgency, the rest as low."""
    return "high" if parse_severity(severity) in HIGH_URGENCY_SEVERITIES else "low"
