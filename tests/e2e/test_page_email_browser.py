"""A page email's HTML part in headless Chromium, as a phone (390 px) and a desk (1280 px) show it:
nothing runs off the side, however long the alert's title, labels or links, and each action link is
a button of its own. No local stack: the email is rendered in-process and opened as a file."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from chalicelib.notification import email_ses
from chalicelib.settings import get_settings
from scripts.chromium_cdp import Tab
from tests.e2e.browser import needs_chromium
from tests.unit.test_page_renderers import ANA, BARE, FULL

pytestmark = needs_chromium

LONG = replace(
    FULL,
    title="Checkout-" + "x" * 300,
    labels=(("instance", "checkout-api-" + "1" * 120), ("env", "prod")),
    runbook_url="https://runbooks.example/" + "a" * 300,
    description="word " * 400 + "y" * 500,
)


@pytest.mark.parametrize("name", ["full", "long", "bare"])
def test_the_page_email_fits_a_phone_and_a_desk(tmp_path: Path, name: str) -> None:
    note = {"full": FULL, "long": LONG, "bare": BARE}[name]
    page = tmp_path / f"{name}.html"
    page.write_text(email_ses.render(note, ANA, settings=get_settings()).html)
    with Tab() as tab:
        tab.open(page.as_uri())
        for width in (390, 1280):
            tab.resize(width, 800)
            assert not tab.overflows_horizontally(), (name, width)
            shot = tab.screenshot(tmp_path / f"{name}-{width}.png", width=width, height=800)
            assert shot.read_bytes().startswith(b"\x89PNG")
        buttons = tab.evaluate(
            "[...document.querySelectorAll('a')].map(a => [a.textContent.trim(), getComputedStyle(a).display])"
        )
    labels = [text for text, display in buttons if display == "inline-block"]
    expected = ["Open the incident", "Acknowledge", "Resolve"] if note.organization_id else ["Open the incident"]
    assert labels == expected
