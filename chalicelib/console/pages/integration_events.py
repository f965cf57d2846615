"""An integration's event log: the requests it received, newest first, filtered by outcome; one
event with its headers and body; the replay of a refused one.

The same scopes as /api/v1/integrations/{id}/events (`integrations:read` to read, every role;
`integrations:write` to replay, owners and admins), the same service functions
(`eventlog.service`, `api.event_replay`) and the same rules; an integration of another
organization is a 404, as in the API. A replay asks first, then shows the event it recorded.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from chalicelib.api.event_replay import replay_event
from chalicelib.console.visits import app_path
from chalicelib.console.web import Confirmation, ConsolePages, Ctx, Page, Redirect
from chalicelib.eventlog import replay, service
from chalicelib.eventlog.models import IntegrationEventSummaryV1, IntegrationEventV1
from chalicelib.eventlog.outcome import OUTCOMES
from chalicelib.integration.admin import to_domain
from chalicelib.settings import Settings

console = ConsolePages(
    __name__,
    notices={"event_replayed": "Event replayed: this is what the delivery did this time."},
)

READ, WRITE = "integrations:read", "integrations:write"
LIST_LIMIT = 25
_REPLAY = Confirmation(
    "Replay this event?",
    "Its body and headers go through the integration as a new delivery would now: it may open an "
    "incident and page someone. The result is recorded as a new event.",
    "Replay event",
)


def _here(integration_id: str, *, settings: Settings) -> str:
    return app_path(f"/integrations/{integration_id}/events", settings=settings)


@console.page("/integrations/{integration_id}/events")
def show_integration_events(ctx: Ctx) -> Page:
    """An integration's event log, newest first."""
    integration_id = ctx.path["integration_id"]
    chosen = [name for name in ctx.query.get("outcome", []) if name in OUTCOMES]
    cursor = ctx.arg("cursor") or None
    page = service.list_events(
        organization_id=ctx.organization_id,
        integration_id=integration_id,
        now=ctx.now,
        outcomes=chosen,
        limit=LIST_LIMIT,
        cursor=cursor,
    )
    integration = service.check_integration(organization_id=ctx.organization_id, integration_id=integration_id)
    filters: list[tuple[str, str]] = [("outcome", name) for name in chosen]
    older = (
        f"{_here(integration_id, settings=ctx.settings)}?{urlencode([*filters, ('cursor', page.next_cursor)])}"
        if page.next_cursor
        else None
    )
    newest = f"{_here(integration_id, settings=ctx.settings)}?{urlencode(filters)}" if cursor else None
    return Page(
        "console/noise/integration_events.html",
        f"Events of {integration.name}",
        section="integrations",
        context={
            "integration": to_domain(integration),
            "here": _here(integration_id, settings=ctx.settings),
            "events": [IntegrationEventSummaryV1.of(record) for record in page.items],
            "outcomes": OUTCOMES,
            "chosen": chosen,
            "older_link": older,
            "newest_link": newest,
        },
    )


def event_page(ctx: Ctx) -> Page:
    found = service.get_event(
        organization_id=ctx.organization_id,
        integration_id=ctx.path["integration_id"],
        event_id=ctx.path["event_id"],
        now=ctx.now,
    )
    event = IntegrationEventV1.detail(found.event, replay.why_not_replay(found.event, found.integration))
    context: dict[str, Any] = {
        "integration": to_domain(found.integration),
        "here": _here(found.integration.integration_id, settings=ctx.settings),
        "event": event,
        "response_text": _pretty(event.response),
        "write_scope": WRITE,
    }
    return Page("console/noise/integration_event.html", f"Event {event.id}", section="integrations", context=context)


@console.page("/integrations/{integration_id}/events/{event_id}")
def show_integration_event(ctx: Ctx) -> Page:
    """One event of an integration's log: its headers, body and what became of it."""
    return event_page(ctx)


@console.action(
    "/integrations/{integration_id}/events/{event_id}/replay", scope=WRITE, on_error=event_page, confirm=_REPLAY
)
def replay_integration_event(ctx: Ctx) -> Redirect:
    """Replay a refused event: what a new delivery of it would do now."""
    found = replay_event(
        organization_id=ctx.organization_id,
        integration_id=ctx.path["integration_id"],
        event_id=ctx.path["event_id"],
        principal=ctx.signed_in,
        now=ctx.now,
        settings=ctx.settings,
    )
    return Redirect(
        f"{_here(found.integration.integration_id, settings=ctx.settings)}/{found.event.event_id}",
        notice="event_replayed",
    )


def _pretty(document: Any) -> str | None:
    return json.dumps(document, indent=2, ensure_ascii=False) if document is not None else None
