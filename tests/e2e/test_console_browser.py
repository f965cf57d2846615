"""The responder console in a real browser: headless Chromium, driven over the DevTools protocol
(scripts/chromium_cdp.py), signs in on the running local stack with a demo console user from
demo.json, acknowledges and resolves an incident with the page's own buttons, and the API then
agrees. Also: the pages run no script and never scroll sideways on a 390 px phone.

Skipped only when Chromium is absent outside CI; in CI (CI set) a missing binary fails.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.chromium_cdp import Tab
from tests.e2e.browser import is_png, needs_chromium, parse
from tests.e2e.conftest import LocalStack

pytestmark = needs_chromium

PHONE = (390, 844)


def console_user(stack: LocalStack, role: str) -> dict[str, Any]:
    users = stack.demo["console"]["users"]
    assert {"owner", "viewer"} <= {user["role"] for user in users}
    found: dict[str, Any] = next(user for user in users if user["role"] == role)
    return found


def open_incident(stack: LocalStack, title: str, severity: str = "SEV1") -> str:
    service_key = stack.demo["services"][0]["service_key"]
    answer = stack.post("/api/v1/incidents", json={"title": title, "service_ids": [service_key], "severity": severity})
    assert answer.status_code == 201, answer.text
    return str(answer.json()["data"]["incident_number"])


@pytest.fixture
def tab() -> Iterator[Tab]:
    with Tab() as browser:
        yield browser


def sign_in(tab: Tab, stack: LocalStack, role: str, path: str) -> None:
    """Open a console page, get sent to sign-in, sign in through the form, land back on the page."""
    console = stack.demo["console"]
    assert console["url"] == stack.base_url + "/app"
    tab.open(console["url"] + path)
    assert tab.url().startswith(console["url"] + "/sign-in?next=")
    person = console_user(stack, role)
    tab.type_into("Email", person["email"])
    tab.type_into("Password", person["password"])
    tab.click("Sign in")
    assert tab.url() == console["url"] + path


def test_a_responder_acknowledges_and_resolves_and_the_api_agrees(tab: Tab, stack: LocalStack) -> None:
    number = open_incident(stack, "Browser test: checkout down")
    grace = console_user(stack, "responder")
    sign_in(tab, stack, "responder", f"/incidents/{number}")
    page = parse(tab.html())
    assert page.find("h1").text() == f"{number} Browser test: checkout down"
    assert page.find_all("script") == []

    tab.click("Acknowledge")
    page = parse(tab.html())
    assert page.find("p", cls="notice").text() == "Acknowledged. You are assigned and escalation has stopped."
    assert page.find("p", cls="badges").find("span", cls="status").text() == "investigating"
    assert "Acknowledge" not in [button.text() for button in page.find("main").find_all("button")]

    tab.click("Resolve")
    page = parse(tab.html())
    assert page.find("p", cls="notice").text() == "Status changed."
    assert page.find("p", cls="badges").find("span", cls="status").text() == "resolved"

    seen = stack.get(f"/api/v1/incidents/{number}").json()["data"]
    assert seen["status"] == "resolved"
    assert seen["acknowledged_at"] is not None and seen["resolved_at"] is not None
    assert seen["assigned_to"]["email"] == grace["email"]
    assert seen["resolved_by"]["email"] == grace["email"]
    titles = [entry["title"] for entry in seen["timeline"]]
    assert f"Acknowledged by {grace['email']}" in titles
    assert titles[0] == "Status changed from investigating to resolved"


def test_a_viewer_sees_the_incident_and_no_action(tab: Tab, stack: LocalStack) -> None:
    number = open_incident(stack, "Browser test: read only", "SEV3")
    sign_in(tab, stack, "viewer", f"/incidents/{number}")
    page = parse(tab.html())
    assert page.find("h1").text() == f"{number} Browser test: read only"
    forms = [form.attrs.get("action") for form in page.find_all("form")]
    assert forms == ["/app/sign-out"]


def test_the_list_and_an_incident_read_on_a_phone(tab: Tab, stack: LocalStack, tmp_path: Path) -> None:
    number = open_incident(stack, "Browser test: a rather long incident title that has to wrap on a phone")
    sign_in(tab, stack, "owner", "/incidents")
    for path in ("/incidents", f"/incidents/{number}"):
        tab.open(stack.demo["console"]["url"] + path)
        shot = tab.screenshot(tmp_path / "phone.png", width=PHONE[0], height=PHONE[1])
        assert not tab.overflows_horizontally(), path
        assert is_png(shot)
        width, height = struct.unpack(">II", shot.read_bytes()[16:24])
        assert width == PHONE[0] and height >= PHONE[1]
        assert parse(tab.html()).find_all("script") == []


def test_the_alert_pages_read_on_a_phone(tab: Tab, stack: LocalStack, tmp_path: Path) -> None:
    hook = stack.demo["integrations"]["custom"]["url"].removeprefix(stack.base_url)
    sent = stack.post(
        hook,
        headers={"Content-Type": "application/json"},
        json={
            "title": "Browser test: an alert whose title is long enough to wrap twice on a narrow phone screen",
            "dedup_key": "browser-test-" + "k" * 60,
            "service_id": stack.demo["services"][0]["service_id"],
            "metadata": {"a_rather_long_label_name_for_the_table": "v" * 80},
        },
    )
    assert sent.status_code == 201, sent.text
    alert_id, number = sent.json()["alert"]["id"], sent.json()["incident"]["id"]
    sign_in(tab, stack, "viewer", "/alerts")
    for path in ("/alerts", f"/alerts/{alert_id}", f"/incidents/{number}"):
        tab.open(stack.demo["console"]["url"] + path)
        tab.screenshot(tmp_path / "phone.png", width=PHONE[0], height=PHONE[1])
        assert not tab.overflows_horizontally(), path
        page = parse(tab.html())
        assert page.find_all("script") == []
        assert "Browser test: an alert whose title" in page.text(), path


DESKTOP = (1280, 800)


def test_the_status_page_templates_and_followers_read_at_desktop_and_phone_width(
    tab: Tab, stack: LocalStack, tmp_path: Path
) -> None:
    pages = stack.get("/api/v1/status-pages").json()["data"]["items"]
    page_id = next(page["id"] for page in pages if page["slug"] == stack.demo["status_page"]["slug"])
    base = f"/status-pages/{page_id}"
    sign_in(tab, stack, "owner", base)
    for path, heading in (
        (base, None),
        (f"{base}/templates", "Incident templates"),
        (f"{base}/subscribers", "Followers"),
    ):
        tab.open(stack.demo["console"]["url"] + path)
        page = parse(tab.html())
        assert page.find_all("script") == []
        if heading:
            assert page.find("h1").text() == heading
        else:  # the page links both, and its incident form offers the demo's templates
            assert page.find("nav", cls="sp-nav").find_all("a")
            assert len(page.find("select", id="f-incident-template").find_all("option")) > 1
        name = path.rsplit("/", 1)[-1] if heading else "page"
        for label, (width, height) in (("desktop", DESKTOP), ("phone", PHONE)):
            shot = tab.screenshot(tmp_path / f"status-{name}-{label}.png", width=width, height=height)
            assert is_png(shot)
            assert not tab.overflows_horizontally(), (path, label)
