"""What a happening adds to which rollup item (pure).

Items are hourly: one per organization, UTC hour, dimension kind and value, so any time zone's
days, weeks and months (and working-hours bands) can be cut from them at read time. Keys:

- partition `<org>#<kind>#<YYYY-MM>` (one month of one dimension kind: a range reads one Query
  per month, whatever the history before or after it);
- sort key `<YYYY-MM-DDTHH>#<value>` (the UTC hour the figure belongs to, then the value).

All-time totals (what /metrics exposes as counters) live in partition `<org>#total`, sort key
`<kind>#<value>`. Incident figures belong to the hour the incident was opened (a cohort: "of the
incidents opened on Monday, how many were acknowledged, how fast"); a person's pages and
acknowledgements, and alerts, belong to the hour they happened.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from chalicelib.insights import histogram

# Dimension kinds of incident figures (group_by and filters read them).
ALL = "all"
SERVICE = "service"
TEAM = "team"
SEVERITY = "severity"
URGENCY = "urgency"
PERSON = "person"
ALERT_SOURCE = "alert_source"
ALERT_SERVICE = "alert_service"
ALERT_KEY = "alert_key"  # the dedup key, or the title when the alert has none
# Every dimension of an incident at once (service|team|severity|urgency): a read that filters or
# groups by more than one dimension cuts it from these (more items than any single kind).
COMBINED = "combined"
INCIDENT_KINDS: tuple[str, ...] = (ALL, SERVICE, TEAM, SEVERITY, URGENCY, COMBINED)
# Totals (all time) for /metrics: incidents by service and severity, pages by channel, inbound by outcome.
TOTAL_SERVICE_SEVERITY = "service_severity"
TOTAL_CHANNEL = "channel"
TOTAL_INBOUND = "inbound"
NO_VALUE = "-"  # the value of the `all` dimension, and of a missing team or urgency

# Counters an incident adds (to the hour it was opened).
OPENED, ACKED, ACK_SECONDS, ACK_IN_SLA, RESOLVED, RESOLVE_SECONDS, ESCALATED = (
    "opened", "acked", "ack_s", "ack_sla", "resolved", "res_s", "escalated",
)  # fmt: skip
ACK_HISTOGRAM, RESOLVE_HISTOGRAM, FLAP_HISTOGRAM = "ah", "rh", "fh"
# Counters of a person (to the hour it happened).
PAGES, PAGES_FAILED, PERSON_ACKED, PERSON_RESOLVED = "pages", "pages_failed", "p_acked", "p_resolved"
CHANNELS: tuple[str, ...] = ("email", "slack", "sms", "voice")
URGENCIES: tuple[str, ...] = ("high", "low")
# Counters of alerts (to the hour the event arrived).
ALERTS, ALERT_INCIDENTS, EVENTS, SUPPRESSED_RULE, SUPPRESSED_MAINTENANCE, DROPPED, AUTO_RESOLVED = (
    "alerts", "alert_incidents", "events", "sup_rule", "sup_maint", "dropped", "auto_resolved",
)  # fmt: skip
INBOUND_OUTCOMES: tuple[str, ...] = ("created", "grouped", "deduplicated", "suppressed", "dropped")


def page_channel_counter(channel: str) -> str:
    return f"page_{channel}"


def page_urgency_counter(urgency: str) -> str:
    return f"page_u_{urgency}"


def histogram_counter(prefix: str, index: int) -> str:
    return f"{prefix}{index}"


def counter_names() -> tuple[str, ...]:
    """Every counter an item may carry (the table model declares each as a number attribute)."""
    plain = (
        OPENED, ACKED, ACK_SECONDS, ACK_IN_SLA, RESOLVED, RESOLVE_SECONDS, ESCALATED,
        PAGES, PAGES_FAILED, PERSON_ACKED, PERSON_RESOLVED,
        ALERTS, ALERT_INCIDENTS, EVENTS, SUPPRESSED_RULE, SUPPRESSED_MAINTENANCE, DROPPED, AUTO_RESOLVED,
    )  # fmt: skip
    channels = tuple(page_channel_counter(channel) for channel in CHANNELS)
    urgencies = tuple(page_urgency_counter(urgency) for urgency in URGENCIES)
    histograms = tuple(
        histogram_counter(prefix, index)
        for prefix in (ACK_HISTOGRAM, RESOLVE_HISTOGRAM, FLAP_HISTOGRAM)
        for index in range(histogram.BUCKETS)
    )
    return plain + channels + urgencies + histograms


def hour_of(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def hour_label(moment: datetime) -> str:
    return hour_of(moment).strftime("%Y-%m-%dT%H")


def parse_hour(label: str) -> datetime:
    return datetime.strptime(label, "%Y-%m-%dT%H").replace(tzinfo=UTC)


def partition(organization_id: str, kind: str, moment: datetime) -> str:
    return f"{organization_id}#{kind}#{hour_of(moment).strftime('%Y-%m')}"


def slot(moment: datetime, value: str) -> str:
    return f"{hour_label(moment)}#{value}"


def total_partition(organization_id: str) -> str:
    return f"{organization_id}#total"


def total_slot(kind: str, value: str) -> str:
    return f"{kind}#{value}"


@dataclass(frozen=True)
class Target:
    """One item a happening adds to: hourly (`at` set) or an all-time total (`at` None)."""

    kind: str
    value: str
    at: datetime | None = None


@dataclass(frozen=True)
class Addition:
    """Counters added to one item."""

    target: Target
    counters: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Happening:
    """Something that happened once, under an id that a redelivery repeats: its additions are
    written all or nothing, at most once (a marker on the id is written in the same write)."""

    organization_id: str
    happening_id: str
    additions: tuple[Addition, ...]


def _to_all(targets: Iterable[Target], counters: Mapping[str, int]) -> tuple[Addition, ...]:
    return tuple(Addition(target, counters) for target in targets)


@dataclass(frozen=True)
class IncidentFacts:
    """What the rollups need of an incident (read from its record)."""

    incident_number: str
    created_at: datetime
    severity: str
    urgency: str | None
    service_keys: tuple[str, ...]
    team_id: str | None


def incident_targets(facts: IncidentFacts) -> tuple[Target, ...]:
    """The hourly items of the hour it opened, and its all-time totals by service and severity."""
    at = facts.created_at
    hourly = [
        Target(ALL, NO_VALUE, at),
        *(Target(SERVICE, key, at) for key in facts.service_keys),
        Target(TEAM, facts.team_id or NO_VALUE, at),
        Target(SEVERITY, facts.severity, at),
        Target(URGENCY, facts.urgency or NO_VALUE, at),
        *(Target(COMBINED, combined_value(key, facts), at) for key in facts.service_keys),
    ]
    totals = [Target(TOTAL_SERVICE_SEVERITY, f"{key}|{facts.severity}") for key in facts.service_keys]
    return tuple(dict.fromkeys([*hourly, *totals]))


def combined_value(service_key: str, facts: IncidentFacts) -> str:
    return "|".join((service_key, facts.team_id or NO_VALUE, facts.severity, facts.urgency or NO_VALUE))


def split_combined(value: str) -> dict[str, str]:
    service, team, severity, urgency = (value.split("|") + [NO_VALUE] * 4)[:4]
    return {SERVICE: service, TEAM: team, SEVERITY: severity, URGENCY: urgency}


def opened(organization_id: str, facts: IncidentFacts) -> Happening:
    return Happening(organization_id, f"opened#{facts.incident_number}", _to_all(incident_targets(facts), {OPENED: 1}))


def acknowledged(
    organization_id: str, facts: IncidentFacts, *, acknowledged_at: datetime, within_sla: bool, person: str | None
) -> Happening:
    """Counted once per incident (an incident is acknowledged at most once, even if reopened)."""
    seconds = max(0, int((acknowledged_at - facts.created_at).total_seconds()))
    counters = {ACKED: 1, ACK_SECONDS: seconds, histogram_counter(ACK_HISTOGRAM, histogram.bucket_of(seconds)): 1}
    if within_sla:
        counters[ACK_IN_SLA] = 1
    additions = _to_all(incident_targets(facts), counters)
    if person:
        additions += (Addition(Target(PERSON, person, acknowledged_at), {PERSON_ACKED: 1}),)
    return Happening(organization_id, f"acked#{facts.incident_number}", additions)


def resolved(
    organization_id: str, facts: IncidentFacts, *, resolved_at: datetime, person: str | None, sign: int = 1
) -> Happening:
    """A resolution (sign 1), or its undoing when the incident is reopened (sign -1): MTTR counts to
    the resolution that stands. The id names the resolution's time, so a resolve, a reopen and a
    second resolve are three happenings, each counted once in whatever order they arrive."""
    seconds = max(0, int((resolved_at - facts.created_at).total_seconds()))
    bucket = histogram_counter(RESOLVE_HISTOGRAM, histogram.bucket_of(seconds))
    counters = {RESOLVED: sign, RESOLVE_SECONDS: sign * seconds, bucket: sign}
    additions = _to_all(incident_targets(facts), counters)
    if person:
        additions += (Addition(Target(PERSON, person, resolved_at), {PERSON_RESOLVED: sign}),)
    what = "resolved" if sign > 0 else "reopened"
    stamp = resolved_at.astimezone(UTC).isoformat()
    return Happening(organization_id, f"{what}#{facts.incident_number}#{stamp}", additions)


def escalated(organization_id: str, facts: IncidentFacts) -> Happening:
    """An incident escalated past its first level, counted once however many times it was."""
    return Happening(
        organization_id, f"escalated#{facts.incident_number}", _to_all(incident_targets(facts), {ESCALATED: 1})
    )


def paged(
    organization_id: str,
    *,
    delivery_id: str,
    person: str,
    channels: Iterable[str],
    urgency: str,
    at: datetime,
    failed_channels: Iterable[str] = (),
) -> Happening:
    """One page of a person: an interruption when something reached them (whatever the channels),
    and per channel what was sent and what failed (the /metrics totals)."""
    sent = [channel for channel in dict.fromkeys(channels) if channel in CHANNELS]
    failed = [channel for channel in dict.fromkeys(failed_channels) if channel in CHANNELS]
    additions: list[Addition] = []
    if sent:
        counters: dict[str, int] = {PAGES: 1, page_urgency_counter(urgency if urgency in URGENCIES else "high"): 1}
        counters.update({page_channel_counter(channel): 1 for channel in sent})
        additions.append(Addition(Target(PERSON, person, at), counters))
    additions.extend(Addition(Target(TOTAL_CHANNEL, channel), {PAGES: 1}) for channel in sent)
    additions.extend(Addition(Target(TOTAL_CHANNEL, channel), {PAGES_FAILED: 1}) for channel in failed)
    return Happening(organization_id, f"paged#{delivery_id}", tuple(_merge_targets(additions)))


def _merge_targets(additions: Iterable[Addition]) -> list[Addition]:
    merged: dict[Target, dict[str, int]] = {}
    for addition in additions:
        counters = merged.setdefault(addition.target, {})
        for name, amount in addition.counters.items():
            counters[name] = counters.get(name, 0) + amount
    return [Addition(target, counters) for target, counters in merged.items()]


@dataclass(frozen=True)
class AlertFacts:
    """One inbound trigger event and what became of it (`outcome` one of INBOUND_OUTCOMES)."""

    event_id: str
    outcome: str
    at: datetime
    source: str
    service_key: str | None
    key: str  # the dedup key, or the title
    suppressed_by: str | None = None  # "event_rule" or "maintenance"
    events: int = 1  # repeats on a dedup key are told a hundred at a time past the fifth


def alert_event(organization_id: str, facts: AlertFacts) -> Happening:
    counters: dict[str, int] = {EVENTS: facts.events}
    if facts.outcome in ("created", "grouped", "suppressed"):
        counters[ALERTS] = 1  # a new alert (a repeat on a dedup key counts as an event only)
    if facts.outcome == "created":
        counters[ALERT_INCIDENTS] = 1
    if facts.outcome == "suppressed":
        counters[SUPPRESSED_MAINTENANCE if facts.suppressed_by == "maintenance" else SUPPRESSED_RULE] = 1
    if facts.outcome == "dropped":
        counters[DROPPED] = 1
    additions = _to_all(_alert_targets(facts), counters)
    additions += (Addition(Target(TOTAL_INBOUND, facts.outcome), {EVENTS: facts.events}),)
    return Happening(organization_id, f"event#{facts.event_id}", additions)


def alert_auto_resolved(organization_id: str, facts: AlertFacts, *, opened_at: datetime) -> Happening:
    """An alert its source resolved: how long it lived (flapping is a short life)."""
    seconds = max(0, int((facts.at - opened_at).total_seconds()))
    counters = {AUTO_RESOLVED: 1, histogram_counter(FLAP_HISTOGRAM, histogram.bucket_of(seconds)): 1}
    return Happening(organization_id, f"autoresolved#{facts.event_id}", _to_all(_alert_targets(facts), counters))


def _alert_targets(facts: AlertFacts) -> tuple[Target, ...]:
    at = facts.at
    return (
        Target(ALERT_SOURCE, facts.source or NO_VALUE, at),
        Target(ALERT_SERVICE, facts.service_key or NO_VALUE, at),
        Target(ALERT_KEY, facts.key[:200] or NO_VALUE, at),
    )


def histogram_of(prefix: str, counters: Mapping[str, int]) -> histogram.Histogram:
    """The histogram whose bucket counters start with `prefix`, out of an item's counters."""
    found: histogram.Histogram = {}
    for index in range(histogram.BUCKETS):
        count = counters.get(histogram_counter(prefix, index), 0)
        if count:
            found[index] = count
    return found
