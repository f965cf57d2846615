"""Incident severities: SEV0 (worst) to SEV4, and the one table of severity words every inbound
source maps through (docs/INTAKE.md). Pure; no I/O."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, Literal

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


# --- severity words of inbound alerts --------------------------------------------------------------

# Every source reads its severity word through this one table, so a word means the same severity
# whatever sent it and whichever payload shape carried it. Keys are `word_key` forms.
SEVERITY_WORDS: Final[Mapping[str, Severity]] = {
    **{name.lower(): name for name in SEVERITIES},
    # The legacy custom payload's words (spec "Legacy custom payload"); `Pre-emptive` -> preemptive.
    "critical": "SEV0",
    "high": "SEV1",
    "medium": "SEV2",
    "low": "SEV3",
    "preemptive": "SEV4",
    # Monitoring tools' words (PagerDuty Events, log levels).
    "fatal": "SEV0",
    "error": "SEV1",
    "warning": "SEV2",
    "warn": "SEV2",
    "info": "SEV3",
    "debug": "SEV4",
    # Priorities (Opsgenie P1-P5).
    "p1": "SEV0",
    "p2": "SEV1",
    "p3": "SEV2",
    "p4": "SEV3",
    "p5": "SEV4",
}

# Where a source's own contract gives a word another meaning, its entry wins over the table.
SOURCE_WORDS: Final[Mapping[str, Mapping[str, Severity]]] = {
    # Alertmanager's `severity: none` (kube-prometheus Watchdog, InfoInhibitor) and `low`.
    "alertmanager": {"none": "SEV4", "low": "SEV4"},
    # Sentry issue levels: `sample` is a sampled event.
    "sentry": {"sample": "SEV4"},
    # Sentry metric alerts: a threshold crossed over time is a symptom; SEV0 stays for fatal errors.
    "sentry_metric": {"critical": "SEV1"},
}
# PagerDuty Events v2 defines exactly four words and refuses any other (the drop-in answers as it does).
PAGERDUTY_WORDS: Final = ("critical", "error", "warning", "info")
# Opsgenie's five priorities, P1 the highest (the table reads them: P1 SEV0 ... P5 SEV4); an alert
# that names none is P3, as Opsgenie has it. Its drop-in refuses any other value, as Opsgenie does.
OpsgeniePriority = Literal["P1", "P2", "P3", "P4", "P5"]
OPSGENIE_PRIORITIES: Final[tuple[OpsgeniePriority, ...]] = ("P1", "P2", "P3", "P4", "P5")
OPSGENIE_DEFAULT_PRIORITY: Final[OpsgeniePriority] = "P3"
_SEPARATORS: Final = re.compile(r"[\s_-]+")


def word_key(value: object) -> str | None:
    """A severity word as the table spells it: case folded, spaces, `-` and `_` gone (`SEV-1`,
    `Pre-emptive`, `P 1`); numbers count as their text. None for blanks and non-scalars."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    key = _SEPARATORS.sub("", str(value)).casefold()
    return key or None


def severity_word(value: object, source: str | None = None) -> Severity | None:
    """The severity a source's word means (`source` picks its overrides), or None for a word no
    table knows (the caller then uses the service's default severity)."""
    key = word_key(value)
    if key is None:
        return None
    overrides = SOURCE_WORDS.get(source or "", {})
    return overrides.get(key) or SEVERITY_WORDS.get(key)


def opsgenie_priority(severity: str) -> OpsgeniePriority:
    """The Opsgenie priority a severity reads as (SEV0 P1 ... SEV4 P5): the inverse of the table's P words."""
    return OPSGENIE_PRIORITIES[rank(severity)]
