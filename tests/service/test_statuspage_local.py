"""The local stack's part: demo status data (exact names, idempotent) and the scheduled-handler runner."""

from __future__ import annotations

import threading
from datetime import timedelta

from chalice.app import ScheduledEventConfig

from chalicelib import clock
from chalicelib.local import demo_status
from chalicelib.local.worker_loop import ScheduleWorker, start_workers
from chalicelib.settings import get_settings
from chalicelib.statuspage import incident_templates, public, scheduled_maintenance
from chalicelib.statuspage.uptime_public import document
from chalicelib.subscriber import repository
from tests.conftest import NOW


def test_demo_status_page(org):
    entry = demo_status.seed_status_page(organization_id=org.organization_id, now=NOW)
    url = "http://127.0.0.1:8000/status/tocsin-demo"
    assert (entry["slug"], entry["url"], entry["uptime_url"]) == ("tocsin-demo", url, f"{url}/uptime.json")
    assert entry["feeds"] == {"atom": f"{url}/history.atom", "rss": f"{url}/history.rss"}
    assert demo_status.seed_status_page(organization_id=org.organization_id, now=NOW + timedelta(hours=1)) == entry
    view = public.load_view("tocsin-demo")
    assert view is not None
    components = public.components(view)
    [section] = components["sections"]
    assert section["name"] == "Core services"
    assert [(c["name"], c["status"]) for c in section["components"]] == [("Dashboard", "operational")]
    [group] = section["groups"]
    assert group["name"] == "APIs"
    assert [(c["name"], c["status"]) for c in group["components"]] == [
        ("Checkout API", "degraded_performance"),
        ("Billing API", "operational"),
    ]
    # Today's incident, then the two past outages (seeding twice made no second set).
    incident, *past = public.incidents(view, None, settings=get_settings())["incidents"]
    assert [(p["title"], p["status"]) for p in past] == [
        ("Dashboards slow for some customers", "resolved"),
        ("Payment provider outage", "resolved"),
    ]
    assert (incident["title"], incident["status"], incident["impact"]) == (
        "Elevated checkout latency",
        "identified",
        "minor",
    )
    assert [(u["status"], u["body"]) for u in reversed(incident["updates"])] == list(demo_status.INCIDENT_UPDATES)
    assert incident["affected_components"][0]["name"] == "Checkout API"
    [window] = public.maintenance(view, None, settings=get_settings())["maintenance"]
    assert (window["title"], window["status"]) == ("Database upgrade", "scheduled")
    assert (window["scheduled_start"], window["scheduled_end"]) == ("2026-11-23T02:00:00Z", "2026-11-23T03:00:00Z")
    assert window["affected_components"][0]["name"] == "Billing API"
    assert public.summary(view, settings=get_settings())["status"] == "degraded_performance"


def test_the_demo_page_has_ninety_days_of_history_templates_and_followers(org):
    demo_status.seed_status_page(organization_id=org.organization_id, now=NOW)
    view = public.load_view("tocsin-demo")
    assert view is not None
    uptime = {c["name"]: c for c in document(view, NOW)["components"]}
    billing = {day["date"]: day for day in uptime["Billing API"]["days"]}
    outage_day = (NOW - timedelta(days=37)).date().isoformat()
    assert billing[outage_day]["worst_status"] == "major_outage"
    assert billing[outage_day]["uptime_percent"] < 100  # 100 minutes down
    dashboard = {day["date"]: day for day in uptime["Dashboard"]["days"]}
    assert dashboard[(NOW - timedelta(days=12)).date().isoformat()]["worst_status"] == "partial_outage"
    checkout_today = uptime["Checkout API"]["days"][-1]
    assert checkout_today["worst_status"] == "degraded_performance"
    assert checkout_today["uptime_percent"] == 100  # degraded is not down
    page_id = view.structure.page.page_id
    assert [t.name for t in incident_templates.list_templates(page_id=page_id)] == [
        "Fixed and monitoring",
        "Investigating elevated errors",
    ]
    followers = {(s.email, s.status) for s in repository.all_subscribers(page_id, NOW)}
    # No webhook follower here: outside the local stage a loopback URL is refused.
    assert followers == {("status-reader@example.com", "confirmed"), ("not-yet-confirmed@example.com", "pending")}


def test_the_local_runner_calls_the_scheduled_handler_like_eventbridge(org):
    from app import app

    demo_status.seed_status_page(organization_id=org.organization_id, now=NOW)
    stop = threading.Event()
    stop.set()  # build the workers without starting loops that outlive the test
    [config] = [
        s for s in app.event_sources if isinstance(s, ScheduledEventConfig) and s.name == "move-maintenance-windows"
    ]
    worker = ScheduleWorker(config, stop, interval=15)
    clock.freeze(NOW + timedelta(hours=14, minutes=30))  # 02:30 the next day
    try:
        assert worker.run_once() == {"started": 1, "completed": 0, "skipped": 0}
    finally:
        clock.freeze(None)
    view = public.load_view("tocsin-demo")
    assert view is not None
    assert [w["status"] for w in public.maintenance(view, None, settings=get_settings())["maintenance"]] == [
        "in_progress"
    ]
    assert (
        scheduled_maintenance.run_scheduler(now=NOW + timedelta(hours=14, minutes=30), settings=get_settings()).started
        == 0
    )


def test_start_workers_includes_the_schedules(monkeypatch, aws_env):
    from app import app

    monkeypatch.setenv("LOCAL_SCHEDULE_SECONDS", "3600")
    monkeypatch.setenv("LOCAL_QUEUE_POLLERS", "3")
    stop = threading.Event()
    workers = start_workers(app, stop, wait_seconds=0)
    try:
        schedules = [w for w in workers if isinstance(w, ScheduleWorker)]
        assert [w.config.name for w in schedules] == [
            "move-maintenance-windows",
            "send-handoff-notices",
            "check-coverage",
            "check-heartbeats",
        ]
        assert schedules[0].interval == 3600
        # Several pollers per queue, as Lambda runs several batches at once.
        assert [w.config.queue for w in workers if not isinstance(w, ScheduleWorker)] == ["tocsin-events"] * 3
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=5)


def test_the_demo_readers_are_not_told_of_history_from_before_they_followed(org):
    """The demo records weeks of history and then its followers: nobody is emailed about outages
    from before they subscribed (a change is dated by its write, not by its publishing); the
    changes made at the moment they followed (today's update, the maintenance) are their samples."""
    from tests.service.outbound_fakes import record_published_messages, run_queue
    from tests.service.subscriber_fakes import raw_emails

    sqs = record_published_messages()
    clock.freeze(None)  # the wall clock runs on, as in `make run`; the demo's history is dated by NOW
    demo_status.seed_status_page(organization_id=org.organization_id, now=NOW)
    assert any(message.message_type == "status_page.incident_updated" for message, _, _ in sqs.sent)
    run_queue(sqs, clock.now() + timedelta(hours=4))
    told = sorted((message["To"], str(message["Subject"])) for message in raw_emails())
    assert told == [
        ("status-reader@example.com", "[Tocsin Demo] Identified: Elevated checkout latency"),
        ("status-reader@example.com", "[Tocsin Demo] Scheduled maintenance: Database upgrade"),
    ]
