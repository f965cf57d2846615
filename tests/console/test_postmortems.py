"""The console's postmortem pages: the list, create, edit, preview and status moves, per role."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib import clock
from tests.conftest import NOW, Org
from tests.console.conftest import ROLES, ConsoleClient, action_forms

SCRIPT = "<script>alert(1)</script>"


def api(client: Any, org: Org, method: str, path: str, body: Any = None) -> Any:
    raw = json.dumps(body) if body is not None else None
    response = getattr(client.http, method)(path, headers={"Authorization": f"Bearer {org.owner_key}"}, body=raw)
    return json.loads(response.body) if response.body else None


@pytest.fixture
def incident_number(client: Any, org: Org) -> str:
    from chalicelib.catalog import service as services

    clock.freeze(NOW)
    key = services.create_service(organization_id=org.organization_id, name="Checkout", now=NOW).service_key
    data = api(client, org, "post", "/api/v1/incidents", {"title": "Checkout down", "service_ids": [key]})
    return str(data["data"]["incident_number"])


@pytest.fixture
def postmortem(client: Any, org: Org, incident_number: str) -> dict[str, Any]:
    body = {
        "incident_number": incident_number,
        "summary": "Payments failed.",
        "impact": {"duration": "42m", "services_affected": ["checkout"]},
        "timeline": [{"timestamp": "12:00", "description": f"Alert {SCRIPT}"}],
        "action_items": [{"text": "Add a canary", "owner_email": "owner@acme.test"}],
    }
    return dict(api(client, org, "post", "/api/v1/postmortems", body)["data"])


def read(client: Any, org: Org, incident_number: str) -> dict[str, Any]:
    return dict(api(client, org, "get", f"/api/v1/postmortems?incident_number={incident_number}")["data"])


def page_path(incident_number: str) -> str:
    return f"/app/incidents/{incident_number}/postmortem"


def edit_fields(stored: dict[str, Any], **changes: str) -> dict[str, str]:
    """The edit form as the page fills it, with `changes` typed over it."""
    fields = {
        "version": str(stored["version"]),
        "level": stored["level"],
        "summary": stored["summary"] or "",
        "impact.duration": "42m",
        "impact.services_affected": "checkout",
        "timeline.0.timestamp": "12:00",
        "timeline.0.description": f"Alert {SCRIPT}",
        "action_items.0.text": "Add a canary",
        "action_items.0.owner_email": "owner@acme.test",
        "action_items.0.status": "pending",
        "timeline.1.timestamp": "",
        "timeline.1.description": "",
        "action_items.1.text": "",
        "action_items.1.status": "pending",
    }
    fields.update(
        {
            key: stored["response_timeline"].get(key.split(".")[1]) or ""
            for key in (
                "response_timeline.time_to_acknowledge",
                "response_timeline.time_to_identify",
                "response_timeline.time_to_resolve",
            )
        }
    )
    fields.update(changes)
    return fields


@pytest.mark.parametrize("role", ROLES)
def test_every_postmortem_page_renders_for_every_role(
    role: str, signed_in: Callable[[str], ConsoleClient], postmortem: dict[str, Any], incident_number: str
) -> None:
    browser = signed_in(role)
    listing = browser.get("/app/postmortems")
    assert listing.status == 200
    assert postmortem["postmortem_number"] in listing.text()
    page = browser.get(page_path(incident_number))
    assert page.status == 200
    dom = page.dom()
    assert len(dom.find_all("h1")) == 1
    # The service's rendered HTML is shown as HTML, its user strings escaped.
    assert dom.find("ol", cls="postmortem-timeline").text() == f"12:00 Alert {SCRIPT}"
    assert SCRIPT not in page.body
    # The response timeline is all nulls here (the incident was never acknowledged): no empty part.
    assert "Response timeline" not in dom.find("section", **{"aria-labelledby": "report-h"}).text()
    if role == "viewer":
        assert action_forms(page) == [] and action_forms(listing) == []
    else:
        assert set(action_forms(page)) == {page_path(incident_number) + "/status", page_path(incident_number) + "/edit"}


def test_the_list_filters_by_status_and_refuses_an_unknown_one(
    as_owner: ConsoleClient, postmortem: dict[str, Any]
) -> None:
    assert postmortem["postmortem_number"] in as_owner.get("/app/postmortems?status=draft").text()
    published = as_owner.get("/app/postmortems?status=published")
    assert published.status == 200 and "No published postmortems." in published.text()
    assert as_owner.get("/app/postmortems?status=lost").status == 400
    assert as_owner.get("/app/postmortems?offset=-1").status == 400


def test_an_empty_list_reads_well(as_owner: ConsoleClient) -> None:
    assert "No postmortems yet." in as_owner.get("/app/postmortems").text()


def test_a_responder_creates_the_postmortem_of_an_incident(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, incident_number: str
) -> None:
    browser = signed_in("responder")
    empty = browser.get(page_path(incident_number))
    assert "No postmortem yet" in empty.text()
    assert action_forms(empty) == [page_path(incident_number)]
    answer = browser.post(page_path(incident_number), {"level": "full"})
    assert answer.status == 303
    assert "Postmortem created as a draft." in browser.follow(answer).text()
    stored = read(client, org, incident_number)
    assert (stored["level"], stored["status"]) == ("full", "draft")
    # A second create is the service's 409, shown on the page.
    again = browser.post(page_path(incident_number), {"level": "full"})
    assert again.status == 409 and "already has a postmortem" in again.text()


def test_an_unknown_incident_is_404_and_a_bad_level_is_400(as_owner: ConsoleClient, incident_number: str) -> None:
    assert as_owner.get(page_path("INC-2026-9999")).status == 404
    assert as_owner.get(page_path("not-an-incident")).status == 404
    as_owner.get(page_path(incident_number))
    refused = as_owner.post(page_path(incident_number), {"level": "epic"})
    assert refused.status == 400 and "Input should be 'light', 'standard' or 'full'" in refused.text()


def test_saving_the_form_updates_the_postmortem_through_the_service(
    as_owner: ConsoleClient, client: Any, org: Org, postmortem: dict[str, Any], incident_number: str
) -> None:
    as_owner.get(page_path(incident_number))
    fields = edit_fields(
        postmortem,
        summary="Payments failed for 42 minutes.",
        **{"timeline.1.timestamp": "12:30", "timeline.1.description": "Rolled back", "impact.duration": ""},
    )
    answer = as_owner.post(page_path(incident_number) + "/edit", fields)
    assert answer.status == 303, answer.body[:2000]
    assert "Postmortem saved." in as_owner.follow(answer).text()
    stored = read(client, org, incident_number)
    assert stored["summary"] == "Payments failed for 42 minutes."
    assert [e["description"] for e in stored["timeline"]] == [f"Alert {SCRIPT}", "Rolled back"]
    assert stored["impact"]["duration"] is None and stored["impact"]["services_affected"] == ["checkout"]
    assert stored["action_items"] == postmortem["action_items"]
    assert stored["version"] == postmortem["version"] + 1


def test_saving_an_untouched_form_writes_nothing(
    as_owner: ConsoleClient, client: Any, org: Org, postmortem: dict[str, Any], incident_number: str
) -> None:
    as_owner.get(page_path(incident_number))
    answer = as_owner.post(page_path(incident_number) + "/edit", edit_fields(postmortem))
    assert answer.status == 303 and "done=postmortem_unchanged" in answer.location
    assert read(client, org, incident_number)["version"] == postmortem["version"]


def test_a_save_over_a_newer_version_is_409_and_keeps_what_was_typed(
    as_owner: ConsoleClient, client: Any, org: Org, postmortem: dict[str, Any], incident_number: str
) -> None:
    as_owner.get(page_path(incident_number))
    api(client, org, "patch", f"/api/v1/postmortems/{postmortem['id']}", {"root_cause": "A bad deploy"})
    answer = as_owner.post(page_path(incident_number) + "/edit", edit_fields(postmortem, summary="Mine"))
    assert answer.status == 409 and "changed since version" in answer.text()
    assert answer.dom().find("textarea", name="summary").text() == "Mine"
    assert read(client, org, incident_number)["summary"] == "Payments failed."


def test_bad_input_is_shown_next_to_its_field_and_nothing_is_saved(
    as_owner: ConsoleClient, client: Any, org: Org, postmortem: dict[str, Any], incident_number: str
) -> None:
    as_owner.get(page_path(incident_number))
    fields = edit_fields(postmortem, **{"action_items.0.owner_email": "not an email", "timeline.1.timestamp": "13:00"})
    answer = as_owner.post(page_path(incident_number) + "/edit", fields)
    assert answer.status == 400
    dom = answer.dom()
    assert dom.find("input", name="action_items.0.owner_email").attrs.get("aria-invalid") == "true"
    assert dom.find("textarea", name="timeline.1.description").attrs.get("aria-invalid") == "true"
    assert read(client, org, incident_number)["version"] == postmortem["version"]


def test_preview_renders_the_report_without_saving(
    as_owner: ConsoleClient, client: Any, org: Org, postmortem: dict[str, Any], incident_number: str
) -> None:
    as_owner.get(page_path(incident_number))
    fields = edit_fields(postmortem, **{"action_items.1.text": f"Fix {SCRIPT}", "action_items.1.status": "completed"})
    answer = as_owner.post(page_path(incident_number) + "/preview", fields)
    assert answer.status == 200
    preview = answer.dom().find("section", cls="pm-preview")
    items = preview.find("ul", cls="postmortem-action-items").find_all("li")
    assert [item.attrs.get("data-status") for item in items] == ["pending", "completed"]
    assert f"Fix {SCRIPT}" in preview.text() and SCRIPT not in answer.body
    # The form still holds what was typed; the postmortem did not change.
    assert answer.dom().find("textarea", name="action_items.1.text").text() == f"Fix {SCRIPT}"
    assert read(client, org, incident_number)["version"] == postmortem["version"]


def test_status_moves_follow_the_service_and_publishing_makes_it_final(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, postmortem: dict[str, Any], incident_number: str
) -> None:
    browser = signed_in("responder")
    page = browser.get(page_path(incident_number))
    assert [b.text() for b in page.dom().find_all("button") if b.text() in {"Send for review", "Publish"}] == [
        "Send for review"
    ]
    moved = browser.post(page_path(incident_number) + "/status", {"status": "in_review", "version": "1"})
    assert moved.status == 303
    assert "Publish" in browser.follow(moved).text()
    refused = browser.post(page_path(incident_number) + "/status", {"status": "in_review", "version": "1"})
    assert refused.status == 409  # the form showed version 1; the postmortem is at 2
    skipped = browser.post(page_path(incident_number) + "/status", {"status": "lost"})
    assert skipped.status == 400 and "status" in skipped.text()
    browser.post(page_path(incident_number) + "/status", {"status": "published", "version": "2"})
    assert read(client, org, incident_number)["status"] == "published"
    final = browser.get(page_path(incident_number))
    assert action_forms(final) == [] and "it is final" in final.text()
    late = browser.post(
        page_path(incident_number) + "/edit", edit_fields(read(client, org, incident_number), summary="x")
    )
    assert late.status == 409 and read(client, org, incident_number)["summary"] == "Payments failed."


def test_a_viewers_forged_posts_are_403_and_change_nothing(
    signed_in: Callable[[str], ConsoleClient], client: Any, org: Org, postmortem: dict[str, Any], incident_number: str
) -> None:
    viewer = signed_in("viewer")
    viewer.get(page_path(incident_number))
    for suffix, fields in (
        ("", {"level": "full"}),
        ("/edit", edit_fields(postmortem, summary="Forged")),
        ("/preview", edit_fields(postmortem)),
        ("/status", {"status": "in_review"}),
    ):
        assert viewer.post(page_path(incident_number) + suffix, fields).status == 403, suffix
    stored = read(client, org, incident_number)
    assert (stored["summary"], stored["status"], stored["version"]) == ("Payments failed.", "draft", 1)


def test_a_missing_or_wrong_csrf_token_is_refused(
    as_owner: ConsoleClient, client: Any, org: Org, postmortem: dict[str, Any], incident_number: str
) -> None:
    as_owner.get(page_path(incident_number))
    path = page_path(incident_number) + "/status"
    assert as_owner.post(path, {"status": "in_review"}, csrf="-").status == 403
    assert as_owner.post(path, {"status": "in_review"}, csrf="bad").status == 403
    assert read(client, org, incident_number)["status"] == "draft"


def test_a_legacy_html_field_left_blank_is_kept(
    as_owner: ConsoleClient, client: Any, org: Org, incident_number: str
) -> None:
    body = {"incident_number": incident_number, "status": "draft", "impact": "<p>Old</p>", "impact_html": "<p>Old</p>"}
    imported = api(client, org, "post", "/api/v1/postmortems/import", body)["data"]
    page = as_owner.get(page_path(incident_number))
    assert "Imported as HTML" in page.text()
    fields = {"version": str(imported["version"]), "level": "standard", "summary": "Now written"}
    assert as_owner.post(page_path(incident_number) + "/edit", fields).status == 303
    stored = read(client, org, incident_number)
    assert (stored["impact"], stored["summary"]) == ("<p>Old</p>", "Now written")


def test_imported_html_is_shown_as_its_text_never_as_markup(
    as_owner: ConsoleClient, client: Any, org: Org, incident_number: str
) -> None:
    # Issue 27 finding 10: a meta refresh in imported HTML sent the reader to a phishing page (the CSP allows it).
    refresh = '<meta http-equiv="refresh" content="0;url=https://phish.example/login">'
    body = {
        "incident_number": incident_number,
        "status": "draft",
        "impact_html": f"{refresh}<p>Checkout &amp; payments</p><ul><li>EU</li><li>US</li></ul>",
        "timeline": f'<form action="https://phish.example"><p>12:00 paged</p></form>{SCRIPT}',
    }
    assert api(client, org, "post", "/api/v1/postmortems/import", body)["data"]["incident_number"] == incident_number
    answer = as_owner.get(page_path(incident_number))
    for markup in ("http-equiv", "phish.example", "<form action", "<script>alert"):
        assert markup not in answer.body
    assert "Checkout &amp; payments\nEU\nUS" in answer.body  # a text paragraph, its lines kept
    assert "Checkout & payments EU US" in answer.text()
    assert "12:00 paged" in answer.text()


def test_html_as_text_keeps_what_a_reader_sees() -> None:
    from chalicelib.console.postmortem_form import html_as_text

    assert html_as_text("<p>a <b>b</b></p><p>c&lt;d</p>") == "a b\nc<d"
    assert html_as_text("<script>x()</script><style>p{}</style>seen") == "seen"
    assert html_as_text("<head><title>t</title></head>one<br>two") == "one\ntwo"
    assert html_as_text("   ") == ""
