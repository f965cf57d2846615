"""What the console's Insights page shows, from the answers of the insights service functions (the
same dicts the API returns): the range asked for, headline figures and the charts' geometry.

The range: the last 7, 30 or 90 days (whole local days of the viewer's zone, today included) or
From-To dates typed in that zone; day buckets up to 31 days, weeks beyond.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from chalicelib import zones
from chalicelib.console import charts
from chalicelib.console.form_times import day_start
from chalicelib.errors import ValidationFailed

PRESETS = ("7", "30", "90")
CUSTOM = "custom"
DAY_BUCKETS_UP_TO = timedelta(days=31)
TOP_PEOPLE = 12
NIGHT_LABEL_WIDTH = 96.0  # "12 · 3 asleep" after each person's bar: the night count in words, not colour alone
BANDS = (("working", "Working hours"), ("evening", "Evening"), ("sleep", "Sleep hours"))


@dataclass(frozen=True)
class Asked:
    """The form as typed (shown back) and what it means."""

    range: str
    start: str  # From, YYYY-MM-DD (custom only)
    end: str  # To, inclusive
    team: str


@dataclass(frozen=True)
class Span:
    since: datetime
    until: datetime
    interval: str  # day or week
    first_day: date
    last_day: date  # inclusive


def asked_from(values: Mapping[str, list[str]]) -> Asked:
    def one(name: str) -> str:
        found = values.get(name) or [""]
        return found[0].strip()

    chosen = one("range") or "30"
    return Asked(chosen, one("from"), one("to"), one("team"))


def _day(value: str, name: str) -> date:
    if not value:
        raise ValidationFailed.for_field(name, "enter a date (YYYY-MM-DD) for a range of your own")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValidationFailed.for_field(name, "must be a date, YYYY-MM-DD") from None


def span_of(asked: Asked, *, zone: str, now: datetime) -> Span:
    """The UTC range and bucket size the page reads; 400 naming the field (range, from, to)."""
    local_today = now.astimezone(zones.zone_info(zone)).date()
    if asked.range in PRESETS:
        first = local_today - timedelta(days=int(asked.range) - 1)
        since, until, last = day_start(first, zone), now, local_today
    elif asked.range == CUSTOM:
        problems: list[dict[str, str]] = []
        days: dict[str, date] = {}
        for name, value in (("from", asked.start), ("to", asked.end)):
            try:
                days[name] = _day(value, name)
            except ValidationFailed as error:
                problems += error.details["fields"] if isinstance(error.details, dict) else []
        if not problems and days["to"] < days["from"]:
            problems.append({"field": "to", "message": "must be on or after From"})
        if problems:
            raise ValidationFailed.for_fields(problems)
        first, last = days["from"], days["to"]
        since, until = day_start(first, zone), day_start(last + timedelta(days=1), zone)
    else:
        raise ValidationFailed.for_field("range", "choose the last 7, 30 or 90 days, or From-To dates")
    interval = "day" if until - since <= DAY_BUCKETS_UP_TO + timedelta(hours=1) else "week"
    return Span(since, until, interval, first, last)


def field_on_form(path: str) -> str:
    """A service's field name as the form names it (the API's since/until are From/To here)."""
    return {"since": "from", "until": "to", "team_ids": "team"}.get(path.split(".")[0], path)


# ---------------------------------------------------------------- figures


def _bucket_label(start: str, interval: str) -> str:
    moment = datetime.fromisoformat(start)
    text = f"{moment.day} {moment:%b}"
    return text if interval == "day" else f"wk {text}"


@dataclass(frozen=True)
class Headline:
    incidents: int
    mtta_p50: str
    mtta_mean: str
    mttr_p50: str
    mttr_mean: str
    within_sla: str
    within_sla_detail: str
    night_interruptions: int
    pages: int


def _seconds(value: float | None) -> str:
    return charts.duration(value) if value is not None else "—"


def headline(incidents: Mapping[str, Any], responders: Mapping[str, Any]) -> Headline:
    totals = incidents["totals"]
    share = totals["acknowledged_within_sla_share"]
    people = responders["people"]
    return Headline(
        incidents=totals["count"],
        mtta_p50=_seconds(totals["mtta_seconds"]["p50"]),
        mtta_mean=_seconds(totals["mtta_seconds"]["mean"]),
        mttr_p50=_seconds(totals["mttr_seconds"]["p50"]),
        mttr_mean=_seconds(totals["mttr_seconds"]["mean"]),
        within_sla="—" if share is None else f"{share * 100:.0f} %",
        within_sla_detail=f"{totals['acknowledged_within_sla']} of {totals['count']}",
        night_interruptions=sum(int(person["interruptions"].get("sleep", 0)) for person in people),
        pages=sum(int(person["pages"]["total"]) for person in people),
    )


@dataclass(frozen=True)
class Chart:
    """One chart: its geometry, what it says in a sentence (the SVG's desc), and its data table."""

    key: str
    title: str
    description: str
    geometry: charts.ColumnChart | charts.LineChart | charts.RowChart
    columns: list[str]
    rows: list[list[str]]


def incident_chart(incidents: Mapping[str, Any], interval: str) -> Chart:
    buckets = incidents["groups"][0]["buckets"] if incidents["groups"] else []
    labels = [_bucket_label(bucket["start"], interval) for bucket in buckets]
    counts = [float(bucket["count"]) for bucket in buckets]
    total = int(sum(counts))
    if total:
        busiest = max(range(len(counts)), key=lambda i: counts[i])
        most = int(counts[busiest])
        said = f"{total} incidents over {len(buckets)} {interval}s; the most, {most}, in {labels[busiest]}."
    else:
        said = f"No incidents over {len(buckets)} {interval}s."
    rows = [[label, str(int(count))] for label, count in zip(labels, counts, strict=True)]
    per = "day" if interval == "day" else "week"
    return Chart(
        "incidents", f"Incidents per {per}", said, charts.column_chart(labels, counts), [per.title(), "Incidents"], rows
    )


def _unit(seconds: Sequence[float | None]) -> tuple[float, str, charts.Format]:
    """Minutes, or hours when the longest is three hours or more (so the axis reads in round numbers)."""
    longest = max((value for value in seconds if value is not None), default=0.0)
    if longest >= 3 * 3600:
        return 3600.0, "hours", lambda value: charts.plain(value) + " h"
    return 60.0, "minutes", charts.minutes


def duration_chart(incidents: Mapping[str, Any], interval: str, key: str, name: str) -> Chart:
    buckets = incidents["groups"][0]["buckets"] if incidents["groups"] else []
    labels = [_bucket_label(bucket["start"], interval) for bucket in buckets]
    means = [bucket[key]["mean"] for bucket in buckets]
    medians = [bucket[key]["p50"] for bucket in buckets]
    divisor, unit, fmt = _unit(means + medians)
    series = [
        ("Mean", [None if v is None else v / divisor for v in means]),
        ("Median (p50)", [None if v is None else v / divisor for v in medians]),
    ]
    geometry = charts.line_chart(labels, series, fmt)
    measured = [v for v in means if v is not None]
    said = (
        f"{name} per {interval}, in {unit}: mean and median. Shortest mean {_seconds(min(measured))}, "
        f"longest {_seconds(max(measured))}; a gap is a {interval} with nothing measured."
        if measured
        else f"No {name.lower()} measured in this range."
    )
    rows = [[label, _seconds(mean), _seconds(p50)] for label, mean, p50 in zip(labels, means, medians, strict=True)]
    return Chart(key, f"{name} over time", said, geometry, [interval.title(), "Mean", "Median (p50)"], rows)


def load_chart(responders: Mapping[str, Any]) -> Chart:
    people = sorted(responders["people"], key=lambda p: (-p["pages"]["total"], p["user"]["name"] or ""))
    rows_drawn: list[tuple[str, list[float]]] = []
    table: list[list[str]] = []
    for person in people:
        name = person["user"]["name"] or person["user"]["email"] or person["user"]["id"]
        bands = [float(person["interruptions"].get(band, 0)) for band, _ in BANDS]
        if len(rows_drawn) < TOP_PEOPLE and person["pages"]["total"]:
            rows_drawn.append((name, bands))
        table.append(
            [
                name,
                str(person["pages"]["total"]),
                *(str(int(b)) for b in bands),
                f"{person['on_call_hours']['total']:g}",
            ]
        )
    sleepers = [row for row in rows_drawn if row[1][2] > 0]
    said = (
        f"Pages per person ({len(rows_drawn)} shown, most paged first), split by the person's own hour: working hours, "
        f"evening and sleep hours. {len(sleepers)} of them were woken in sleep hours."
        if rows_drawn
        else "Nobody was paged in this range."
    )
    columns = ["Person", "Pages", *(label for _, label in BANDS), "Hours on call"]
    geometry = charts.row_chart(rows_drawn, [label for _, label in BANDS], value_width=NIGHT_LABEL_WIDTH)
    return Chart("load", "Load per person", said, geometry, columns, table)


def noisy_chart(alerts: Mapping[str, Any]) -> Chart:
    sources = alerts["top_sources"]
    drawn = [(str(source["source"]), [float(source["alerts"])]) for source in sources if source["alerts"]]
    said = (
        f"Alerts per source, the noisiest first: {drawn[0][0]} raised {int(drawn[0][1][0])}."
        if drawn
        else "No alerts in this range."
    )
    rows = [
        [str(s["source"]), str(s["alerts"]), str(s["incidents"]), str(s["events"]), str(s["flapping"])] for s in sources
    ]
    columns = ["Source", "Alerts", "Incidents", "Events", "Flapping"]
    return Chart("noisy", "Top noisy sources", said, charts.row_chart(drawn, ["Alerts"]), columns, rows)
