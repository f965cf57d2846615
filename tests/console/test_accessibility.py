"""Every console page, as the owner sees it (the most forms), read for the structure assistive
technology needs: one h1, headings in order, landmarks, every control labelled, unique ids,
buttons that say what they do, no script and no inline style (the CSP would block them)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest

from chalicelib.directory import teams
from chalicelib.eventrule import service as rules
from chalicelib.eventrule.rules import Actions
from chalicelib.heartbeat import service as heartbeats
from chalicelib.integration import admin
from chalicelib.maintenance import service as windows
from chalicelib.notification import email_links
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.console.alert_world import event, origin_for
from tests.console.conftest import ConsoleClient, Person
from tests.console.routing_world import World, build_world
from tests.console.test_status_pages import StatusPage, status_page  # noqa: F401 (a fixture)
from tests.e2e.browser import Element, parse

LABELLED = {"input", "select", "textarea"}
UNLABELLED_INPUTS = {"hidden", "submit", "button"}


@pytest.fixture
def world(org: Org, people: dict[str, Person]) -> World:
    return build_world(org, people)


def _incident(client: Any, org: Org, world: World) -> str:
    answer = client.http.post(
        "/api/v1/incidents",
        headers={"Authorization": f"Bearer {org.owner_key}", "Content-Type": "application/json"},
        body=json.dumps({"title": "Checkout down", "service_ids": [world.service_key], "severity": "SEV1"}),
    )
    assert answer.status_code == 201, answer.body
    return str(json.loads(answer.body)["data"]["incident_number"])


def _noise_control(org: Org, world: World) -> str:
    """A maintenance window, a heartbeat and event rules, so their pages show rows and buttons; the
    integration whose rule list is walked."""
    organization_id = org.organization_id
    windows.create_window(
        organization_id=organization_id,
        service_refs=[world.bare_service_key],  # not the alerts' service: it would silence them
        start=NOW,
        end=NOW + timedelta(hours=2),
        now=NOW,
    )
    heartbeats.create_heartbeat(
        organization_id=organization_id,
        name="backup",
        service_ref=world.service_key,
        interval_seconds=300,
        grace_seconds=0,
        now=NOW,
        settings=get_settings(),
    )
    integration = admin.create_integration(
        organization_id=organization_id, integration_type="custom", name="Hooks", now=NOW, settings=get_settings()
    ).integration
    for integration_id in (None, integration.integration_id):
        for note in ("one", "two"):
            rules.create_rule(
                organization_id=organization_id,
                integration_id=integration_id,
                now=NOW,
                conditions=[("labels.env", "equals", "staging")],
                actions=Actions(suppress=True, note=note),
            )
    return integration.integration_id


def _event(org: Org, integration_id: str) -> str:
    """A refused request in the integration's event log (its page shows headers, body and Replay)."""
    from chalicelib.eventlog import service as eventlog
    from chalicelib.eventlog import slots
    from chalicelib.eventlog.outcome import Outcome

    received = eventlog.Received(
        integration_id=integration_id,
        organization_id=org.organization_id,
        operation_id="deliverWebhook",
        method="POST",
        route="/webhooks/{routing_key}",
        source_address="203.0.113.9",
        headers={"User-Agent": "monitor/1", "Content-Type": "application/json"},
        body=b'{"title": "Disk full", "service_id": "SER-09999"}',
        received_at=NOW,
    )
    refused = Outcome(
        "refused", action="trigger", title="Disk full", message="Unknown service", error_code="INVALID_PAYLOAD"
    )
    slot = slots.slot_for(NOW, hits=1, rate_limited=False, window_seconds=60)
    return eventlog.record(received, eventlog.Answer(400, {"success": False}, refused), slot).event_id


def _alerts(org: Org, world: World) -> tuple[str, str, str]:
    """An incident with two alerts (the second grouped into it), and an alert a maintenance window suppressed."""
    from chalicelib.catalog.grouping import AlertGrouping
    from chalicelib.catalog.service import update_service
    from chalicelib.integration.ingest import ingest
    from chalicelib.maintenance.in_effect import WindowInEffect

    update_service(
        organization_id=org.organization_id,
        service_ref=world.service_key,
        now=NOW,
        alert_grouping=AlertGrouping(type="time", window_minutes=10),
    )
    prom = origin_for(org, "alertmanager", "prom", world.service_key)
    first = ingest(
        prom, event("a", "Disk full on db1", metadata={"labels.env": "prod"}), now=NOW, settings=get_settings()
    )
    ingest(prom, event("b", "Disk full on db2"), now=NOW, settings=get_settings())
    window = WindowInEffect(window_id="mw_1", description=None, end_at=NOW)
    with mock.patch("chalicelib.integration.triggering.window_in_effect", return_value=window):
        quiet = ingest(prom, event("c", "Planned reboot"), now=NOW, settings=get_settings())
    assert first.incident is not None and first.alert is not None and quiet.alert is not None
    return first.incident.incident_number, first.alert.alert_id, quiet.alert.alert_id


def _problems(page: Element) -> list[str]:
    found: list[str] = []
    main = page.find("main")
    if len(main.find_all("h1")) != 1:
        found.append(f"h1 count {len(main.find_all('h1'))}")
    if page.find("html").attrs.get("lang") != "en":
        found.append("no lang")
    for landmark in ("header", "nav", "main"):
        if not page.find_all(landmark):
            found.append(f"no <{landmark}>")
    levels = [int(e.tag[1]) for e in main.iter() if e.tag in ("h1", "h2", "h3", "h4", "h5", "h6")]
    found += [f"heading h{b} after h{a}" for a, b in itertools.pairwise(levels) if b > a + 1]
    ids = Counter(e.attrs["id"] for e in page.iter() if e.attrs.get("id"))
    found += [f"duplicate id {i}" for i, n in ids.items() if n > 1]
    labels_for = {str(e.attrs.get("for")) for e in page.find_all("label")}
    wrapped = {id(control) for label in page.find_all("label") for control in label.iter()}
    for control in page.iter():
        if control.tag not in LABELLED or control.attrs.get("type") in UNLABELLED_INPUTS:
            continue
        if id(control) not in wrapped and control.attrs.get("id") not in labels_for:
            found.append(f"unlabelled <{control.tag} name={control.attrs.get('name')}>")
    found += ["a button without words" for button in page.find_all("button") if not button.text().strip()]
    found += ["a script" for _ in page.find_all("script")]
    found += [f"inline style on <{e.tag}>" for e in page.iter() if "style" in e.attrs]
    return found


def _template_and_follower(org: Org, page: StatusPage) -> None:
    """A template (so the incident forms show the picker and the templates page its forms) and a
    follower (so the followers page shows its table, filters and Remove)."""
    from chalicelib.statuspage import incident_templates
    from tests.console.test_status_followers_console import follower

    statuses = {page.api_id: "major_outage"}
    incident_templates.create_template(
        page_id=page.page_id,
        name="DB down",
        title="Database outage",
        body="Investigating.",
        component_statuses=statuses,
        now=NOW,
    )
    follower(org, page, 1, components=[page.web_id])


def test_every_page_has_the_structure_assistive_technology_needs(
    signed_in: Callable[[str], ConsoleClient],
    client: Any,
    org: Org,
    world: World,
    people: dict[str, Person],
    status_page: StatusPage,  # noqa: F811
) -> None:
    number = _incident(client, org, world)
    team_id = teams.create_team(
        organization_id=org.organization_id, name="Payments", now=NOW, member_ids=[people["responder"].user_id]
    ).team_id
    integration_id = _noise_control(org, world)
    event_id = _event(org, integration_id)
    grouped, alert_id, suppressed_id = _alerts(org, world)
    _template_and_follower(org, status_page)
    browser = signed_in("owner")
    paths = [
        "/app/incidents",
        "/app/incidents/new",
        f"/app/incidents/{number}",
        f"/app/incidents/{number}/postmortem",
        f"/app/incidents/{grouped}",
        "/app/alerts",
        f"/app/alerts/{alert_id}",
        f"/app/alerts/{suppressed_id}",
        "/app/postmortems",
        "/app/on-call",
        "/app/schedules",
        f"/app/schedules/{world.schedule_id}",
        "/app/schedules/new",
        f"/app/schedules/{world.schedule_id}/edit",
        "/app/escalation-policies",
        "/app/escalation-policies/new",
        f"/app/escalation-policies/{world.policy_id}",
        "/app/services",
        "/app/services/new",
        f"/app/services/{world.service_key}",
        "/app/integrations",
        "/app/webhooks",
        "/app/api-keys",
        "/app/status-pages",
        f"/app/status-pages/{status_page.page_id}",
        f"/app/status-pages/{status_page.page_id}/templates",
        f"/app/status-pages/{status_page.page_id}/subscribers",
        "/app/profile",
        "/app/maintenance",
        "/app/heartbeats",
        "/app/event-rules",
        f"/app/integrations/{integration_id}/event-rules",
        f"/app/integrations/{integration_id}/events",
        f"/app/integrations/{integration_id}/events/{event_id}",
        "/app/incidents?assigned=me&refresh=30",
        "/app/people",
        f"/app/people/{people['responder'].user_id}",
        "/app/teams",
        f"/app/teams/{team_id}",
        "/app/settings",
        "/app/insights",
    ]
    report = {}
    for path in paths:
        answer = browser.get(path)
        assert answer.status == 200, (path, answer.status)
        problems = _problems(answer.dom())
        if problems:
            report[path] = problems
    report.update(_schedule_forms_refused_and_previewed(signed_in, world, people))
    # Pages that answer a POST: the bulk action's lines, the deactivation's confirmation.
    answers = {
        "POST /app/incidents/bulk": browser.post(
            "/app/incidents/bulk", [("action", "acknowledge"), ("incident", number), ("incident", grouped)]
        ),
        "POST /app/people/{id}/deactivate": browser.post(f"/app/people/{people['responder'].user_id}/deactivate"),
    }
    for name, answer in answers.items():
        assert answer.status == 200, (name, answer.status)
        problems = _problems(answer.dom())
        if problems:
            report[name] = problems
    anonymous = ConsoleClient(client.http)
    link = email_links.sign(
        email_links.new_link(
            organization_id=org.organization_id,
            user_id=people["responder"].user_id,
            incident_number=number,
            action="resolve",
            now=NOW,
        ),
        settings=get_settings(),
    )
    email_action = f"/app/email-actions/{link}"
    signed_out = [("/app/sign-in", anonymous.get("/app/sign-in")), ("/app/forgot-password", None)]
    signed_out += [(email_action, anonymous.get(email_action))]
    signed_out += [(email_action + " (done)", anonymous.follow(anonymous.post(email_action)))]
    for path, shown in signed_out:
        page = (shown or anonymous.get(path)).dom()
        problems = [p for p in _problems(page) if p != "no <nav>"]  # no menu before signing in
        if problems:
            report[path] = problems
    assert report == {}


def _schedule_forms_refused_and_previewed(
    signed_in: Callable[[str], ConsoleClient], world: World, people: dict[str, Person]
) -> dict[str, list[str]]:
    """The pages a form answers with: the editor's preview and its refusal, a cover request on the
    schedule's page (the responder's, with the ask form) and a refused ask."""
    from tests.console.test_schedule_editor import _form

    report: dict[str, list[str]] = {}
    owner = signed_in("owner")
    owner.get("/app/schedules/new")
    for label, sent, status in (
        ("preview", _form(people, op="preview"), 200),
        ("refused", _form(people, op="save", layer1_start="soon", layer2_rend=["26:00", "17:00"]), 400),
    ):
        answer = owner.post("/app/schedules/new", sent)
        assert answer.status == status, (label, answer.body[:500])
        if problems := _problems(answer.dom()):
            report[f"editor {label}"] = problems
    responder = signed_in("responder")
    page = f"/app/schedules/{world.schedule_id}"
    responder.get(page)
    ask = {"cover_start": "2026-11-22T18:00", "cover_end": "2026-11-22T22:00", "cover_note": ""}
    assert responder.post(f"{page}/swap-requests", ask).status == 303
    refused = responder.post(f"{page}/swap-requests", {**ask, "cover_end": "later"})
    assert refused.status == 400
    for label, answer in (("with a request", responder.get(page)), ("ask refused", refused)):
        if problems := _problems(answer.dom()):
            report[f"schedule {label}"] = problems
    return report


def test_the_reader_finds_each_kind_of_problem() -> None:
    page = parse(
        '<html lang="en"><body><header></header><main><h1>A</h1><h3>B</h3>'
        '<input name="q" id="q"><label>Wrapped <input name="w"></label>'
        '<p id="d"></p><p id="d"></p><button></button><script></script><div style="x"></div></main></body></html>'
    )
    assert sorted(_problems(page)) == sorted(
        [
            "no <nav>",
            "heading h3 after h1",
            "duplicate id d",
            "unlabelled <input name=q>",
            "a button without words",
            "a script",
            "inline style on <div>",
        ]
    )
