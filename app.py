"""Wiring only: the Chalice app, its blueprints, middleware and SQS workers."""

from __future__ import annotations

from typing import Any

from chalice.app import Chalice, CloudWatchEvent, Rate, SQSEvent

from chalicelib import logs
from chalicelib.api.middleware import http_middleware
from chalicelib.api.routes import (
    auth,
    directory,
    escalate,
    escalation_policies,
    incident_settings,
    incidents,
    integrations,
    local_dev,
    meta,
    oncall,
    paging,
    postmortems,
    public_status,
    schedules,
    status_pages,
    webhooks,
)
from chalicelib.statuspage import scheduled
from chalicelib.workers import dispatch, handlers  # noqa: F401  (registers consumers)

app = Chalice(app_name="tocsin")
app.api.cors = False
logs.configure()

app.register_middleware(http_middleware, "http")
app.register_blueprint(auth.api.blueprint)
app.register_blueprint(directory.api.blueprint)
app.register_blueprint(incidents.api.blueprint)
app.register_blueprint(incident_settings.api.blueprint)
app.register_blueprint(integrations.api.blueprint)
app.register_blueprint(webhooks.api.blueprint)
app.register_blueprint(escalate.api.blueprint)
app.register_blueprint(paging.api.blueprint)
app.register_blueprint(schedules.api.blueprint)
app.register_blueprint(escalation_policies.api.blueprint)
app.register_blueprint(oncall.api.blueprint)
app.register_blueprint(local_dev.api.blueprint)
app.register_blueprint(postmortems.api.blueprint)
app.register_blueprint(status_pages.api.blueprint)
app.register_blueprint(public_status.api.blueprint)
app.register_blueprint(meta.meta)  # last: its catch-all answers unknown routes


@app.on_sqs_message(queue="tocsin-events", batch_size=10)
def handle_events(event: SQSEvent) -> dict[str, Any]:
    return dispatch.handle_records(event.to_dict()["Records"])


@app.schedule(Rate(1, unit=Rate.MINUTES), name="move-maintenance-windows")
def move_maintenance_windows(event: CloudWatchEvent) -> dict[str, int]:
    return scheduled.move_due_maintenance(event.to_dict())
