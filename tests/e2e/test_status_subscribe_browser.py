"""Subscribing from the human status page in a real browser: headless Chromium (driven over the
DevTools protocol, scripts/chromium_cdp.py) fills the page's form, ticks a component, submits,
reads the "check your inbox" page; the confirmation email is read from the local outbox and its
link followed; the link's page confirms with its one button, and the API then counts one
confirmed subscriber. The pages stay script-free and fit a phone.

Skipped only when Chromium is absent outside CI; in CI (CI set) a missing binary fails.
"""

from __future__ import annotations

import json
import re
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.chromium_cdp import Tab
from tests.e2e.browser import is_png, needs_chromium, parse
from tests.e2e.conftest import LocalStack

pytestmark = needs_chromium

PHONE = (390, 844)
READER = "reader@example.com"
CONFIRM_LINK = re.compile(r'href="([^"]*/status/tocsin-demo/confirm\?token=[^"]+)"')


@pytest.fixture
def tab() -> Iterator[Tab]:
    with Tab() as browser:
        yield browser


def press(tab: Tab, text: str, tag: str) -> None:
    """Click an element that loads no new page (a disclosure, a checkbox's label), as a mouse would."""
    box = tab.evaluate(
        f"(() => {{ const el = [...document.querySelectorAll('{tag}')].find(e => e.textContent.trim() === "
        f"{json.dumps(text)} && e.offsetParent !== null); if (!el) return null; el.scrollIntoView({{block: 'center'}});"
        " const r = el.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()"
    )
    assert box, f"no visible <{tag}> {text!r}"
    for kind in ("mousePressed", "mouseReleased"):
        tab.call(
            "Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1}
        )


def confirmation_link(stack: LocalStack) -> str:
    """The confirm link of the newest email to READER (the worker loop sends it within a moment)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        answer = stack.get(f"/local/outbox?channel=email&to={READER}")
        assert answer.status_code == 200, answer.text
        for item in answer.json()["data"]["items"]:
            found = CONFIRM_LINK.search(item.get("html") or "")
            if found:
                return found.group(1).replace("&amp;", "&")
        time.sleep(0.5)
    raise AssertionError(f"no confirmation email for {READER}:\n{stack.log()[-3000:]}")


def demo_page_id(stack: LocalStack) -> str:
    listed = stack.get("/api/v1/status-pages?limit=100").json()["data"]["items"]
    page: dict[str, Any] = next(p for p in listed if p["slug"] == "tocsin-demo")
    return str(page["id"])


def test_a_reader_subscribes_with_the_form_and_confirms_from_the_email(
    tab: Tab, stack: LocalStack, tmp_path: Path
) -> None:
    page_url = str(stack.demo["status_page"]["url"])
    tab.open(page_url)
    page = parse(tab.html())
    form = page.find("section", id="subscribe").find("form")
    assert form.attrs["method"] == "post" and page.find_all("script") == []
    assert [legend.text() for legend in form.find_all("legend")][:2] == ["Core services", "APIs"]

    tab.type_into("Email address", READER)
    press(tab, "Only some components (optional)", "summary")
    press(tab, "Checkout API", "label")
    assert tab.evaluate("document.querySelector('input[name=component_ids]:checked') !== null")
    tab.click("Subscribe")
    assert tab.url() == page_url + "/subscribe"
    answered = parse(tab.html())
    assert answered.find("h2").text() == "Check your inbox"
    assert answered.find_all("script") == []

    link = confirmation_link(stack)
    tab.open(link)
    shown = parse(tab.html())
    assert [button.text() for button in shown.find_all("button")] == ["Confirm subscription"]
    shot = tab.screenshot(tmp_path / "confirm-phone.png", width=PHONE[0], height=PHONE[1])
    assert is_png(shot) and not tab.overflows_horizontally()
    tab.click("Confirm subscription")
    assert parse(tab.html()).find("h2").text() == "You are subscribed"

    counted = stack.get(f"/api/v1/status-pages/{demo_page_id(stack)}/subscribers/count").json()["data"]
    assert counted["confirmed"] >= 1
    listed = stack.get(f"/api/v1/status-pages/{demo_page_id(stack)}/subscribers?status=confirmed").json()
    [reader] = [s for s in listed["data"]["items"] if s["email"] == READER]
    assert len(reader["component_ids"]) == 1


def test_a_mistyped_address_comes_back_with_the_problem_next_to_the_field(tab: Tab, stack: LocalStack) -> None:
    tab.open(str(stack.demo["status_page"]["url"]))
    tab.type_into("Email address", "not-an-address@")
    # The browser's own check (type=email) would stop the form; a reader without it gets the server's.
    tab.evaluate("document.querySelector('#subscribe form').noValidate = true")
    tab.click("Subscribe")
    page = parse(tab.html())
    problem = page.find("p", id="subscribe-email-problem")
    assert problem.text() == "Enter an email address like name@example.com."
    assert page.find("input", id="subscribe-email").attrs["aria-describedby"] == "subscribe-email-problem"


def test_the_form_reads_on_a_phone(tab: Tab, stack: LocalStack, tmp_path: Path) -> None:
    tab.open(str(stack.demo["status_page"]["url"]))
    press(tab, "Only some components (optional)", "summary")
    shot = tab.screenshot(tmp_path / "phone.png", width=PHONE[0], height=PHONE[1])
    assert not tab.overflows_horizontally()
    width, height = struct.unpack(">II", shot.read_bytes()[16:24])
    assert width == PHONE[0] and height >= PHONE[1]
