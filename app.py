"""Wiring only: the Chalice app, its routes, middleware, SQS workers and scheduled functions.

Routes are mounted from the generated table (chalicelib.api.route_table) and their modules are
imported on first use, so a cold start loads only what its requests need. After adding or
changing an operation, run `python -m chalicelib.api.route_index`.
"""

from __future__ import annotations

from typing import Any

from chalice.app import Chalice, CloudWatchEvent, Rate, SQSEvent

from chalicelib import logs
from chalicelib.api import lazy
from chalicelib.api.middleware import http_middleware
from chalicelib.api.routes import meta

app = Chalice(app_name="tocsin")
app.api.cors = False
logs.configure()

app.register_middleware(http_middleware, "http")
lazy.mount(app)
app.register_blueprint(meta.meta)  # last: its catch-all answers unknown routes


@app.on_sqs_message(queue="tocsin-events", batch_size=10)
def handle_events(event: SQSEvent) -> dict[str, Any]:
    # Imported here, so the API function never loads the workers (nor the workers the routes).
    from chalicelib.workers import dispatch

    return dispatch.handle_records(event.to_dict()["Records"])


@app.schedule(Rate(1, unit=Rate.MINUTES), name="move-maintenance-windows")
def move_maintenance_windows(event: CloudWatchEvent) -> dict[str, int]:
    from chalicelib.workers import scheduled

    return scheduled.move_due_maintenance(event.to_dict())


@app.schedule(Rate(1, unit=Rate.MINUTES), name="send-handoff-notices")
def send_handoff_notices(event: CloudWatchEvent) -> dict[str, int]:
    from chalicelib.workers import scheduled

    return scheduled.send_handoff_notices(event.to_dict())


@app.schedule(Rate(1, unit=Rate.MINUTES), name="check-coverage")
def check_coverage(event: CloudWatchEvent) -> dict[str, int]:
    from chalicelib.workers import scheduled

    return scheduled.check_coverage(event.to_dict())


@app.schedule(Rate(1, unit=Rate.MINUTES), name="check-heartbeats")
def check_heartbeats(event: CloudWatchEvent) -> dict[str, int]:
    from chalicelib.workers import scheduled

    return scheduled.check_heartbeats(event.to_dict())
