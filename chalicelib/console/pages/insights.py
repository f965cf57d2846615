"""Insights: how fast incidents are acknowledged and resolved, who is paged and when, which sources
are noisy, over a range and for a team, with charts drawn server-side as SVG; and the four exports'
download links for that range.

The figures are the insights service functions' answers (the same the API's
/api/v1/insights/{incidents,responders,alerts} return), read as `insights:read`; a download is
POST /api/v1/exports/{kind}/links's use case (`exports:read`), answered with a redirect to the
signed link.
"""

from __future__ import annotations

from chalicelib.console import insights_view as view
from chalicelib.console.form_problems import on_the_form
from chalicelib.console.web import ConsolePages, Ctx, Page, Redirect
from chalicelib.directory.teams import list_teams
from chalicelib.errors import ValidationFailed
from chalicelib.exports import links
from chalicelib.exports.columns import EXPORT_KINDS
from chalicelib.exports.requests import FILTERS, checked_request, export_kind
from chalicelib.insights import service as insights
from chalicelib.insights.models import AlertInsightsQuery, IncidentInsightsQuery, ResponderInsightsQuery
from chalicelib.insights.responders import responder_insights

console = ConsolePages(__name__)

READ, EXPORT = "insights:read", "exports:read"
EXPORT_LABELS = {
    "incidents": "Incidents",
    "alerts": "Alerts",
    "notifications": "Notifications",
    "shifts": "On-call shifts",
}
TOP_SOURCES = 8


def _asked(ctx: Ctx) -> view.Asked:
    # A download's refusal re-renders the page from the form it posted.
    return view.asked_from(ctx.form if ctx.request.method == "POST" else ctx.query)


def _team_choices(ctx: Ctx) -> list[tuple[str, str]]:
    return [(team.team_id, team.name) for team in list_teams(organization_id=ctx.organization_id, is_active=True)]


def _check_team(asked: view.Asked, choices: list[tuple[str, str]]) -> None:
    if asked.team and asked.team not in {team_id for team_id, _ in choices}:
        raise ValidationFailed.for_field("team", "choose a team from the list, or All teams")


def _figures(ctx: Ctx, asked: view.Asked, span: view.Span) -> dict[str, object]:
    organization_id = ctx.organization_id
    teams = [asked.team] if asked.team else None
    common = {"since": span.since, "until": span.until, "time_zone": ctx.zone}
    incidents = insights.incident_insights(
        organization_id=organization_id,
        query=IncidentInsightsQuery.model_validate({**common, "team_ids": teams, "interval": span.interval}),
        now=ctx.now,
    )
    responders = responder_insights(
        organization_id=organization_id,
        query=ResponderInsightsQuery.model_validate({**common, "team_ids": teams}),
        now=ctx.now,
    )
    alerts = insights.alert_insights(
        organization_id=organization_id,
        query=AlertInsightsQuery.model_validate({"since": span.since, "until": span.until, "limit": TOP_SOURCES}),
        now=ctx.now,
    )
    return {
        "headline": view.headline(incidents, responders),
        "charts": [
            view.incident_chart(incidents, span.interval),
            view.duration_chart(incidents, span.interval, "mtta_seconds", "Time to acknowledge"),
            view.duration_chart(incidents, span.interval, "mttr_seconds", "Time to resolve"),
            view.load_chart(responders),
            view.noisy_chart(alerts),
        ],
        "bands": responders["bands"],
        "alert_totals": alerts["totals"],
    }


def insights_page(ctx: Ctx) -> Page:
    asked = _asked(ctx)
    choices = _team_choices(ctx)
    problems: list[dict[str, str]] = []
    figures: dict[str, object] = {}
    span: view.Span | None = None
    try:
        _check_team(asked, choices)
        resolved = view.span_of(asked, zone=ctx.zone, now=ctx.now)
        figures = _figures(ctx, asked, resolved)
        span = resolved  # only a range the service took: the page offers its downloads
    except ValidationFailed as error:
        details = on_the_form(error, view.field_on_form).details
        problems = list(details["fields"]) if isinstance(details, dict) else []
    return Page(
        "console/insights/insights.html",
        "Insights",
        section="insights",
        status=400 if problems else 200,
        context={
            "asked": asked,
            "span": span,
            "team_choices": choices,
            "team_name": dict(choices).get(asked.team),
            "range_problems": problems,
            "export_kinds": [(kind, EXPORT_LABELS[kind], "team" in FILTERS[kind]) for kind in EXPORT_KINDS],
            "export_scope": EXPORT,
            **figures,
        },
    )


@console.page("/insights")
def show_insights(ctx: Ctx) -> Page:
    """Insights: incidents, response times, load per person, noisy sources; charts and exports."""
    return insights_page(ctx)


@console.action("/insights/exports/{kind}", scope=EXPORT, on_error=insights_page)
def download_export(ctx: Ctx) -> Redirect:
    """A signed download link for an export of the range shown, as POST /api/v1/exports/{kind}/links."""
    kind = export_kind(ctx.path["kind"])
    asked = _asked(ctx)
    try:
        _check_team(asked, _team_choices(ctx))
        span = view.span_of(asked, zone=ctx.zone, now=ctx.now)
        team = asked.team if asked.team and "team" in FILTERS[kind] else None
        request = checked_request(
            organization_id=ctx.organization_id,
            kind=kind,
            since=span.since,
            until=span.until,
            filters={"team": team},
        )
    except ValidationFailed as error:
        raise on_the_form(error, view.field_on_form) from None
    link = links.new_link(request, "csv", lifetime=links.DEFAULT_LIFETIME, now=ctx.now)
    return Redirect(links.link_url(link, settings=ctx.settings))
