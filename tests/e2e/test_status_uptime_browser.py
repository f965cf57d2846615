"""The 90-day uptime bars in a real browser: headless Chromium loads status pages from the running
local stack; we read the DOM it rendered and the pixels of its screenshots.

A page made for this test has one component that had a major outage today (its PATCHes go
through the API, so their history is recorded as in production); the demo page shows bars too.
Skipped only when Chromium is absent outside CI, like the other browser tests.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest
import requests

from chalicelib.statuspage.uptime_html import BAR_STYLES, NO_DATA_COLOUR
from tests.e2e.browser import Element, dump_dom, needs_chromium, parse, screenshot
from tests.e2e.conftest import LocalStack

pytestmark = needs_chromium

DESKTOP, PHONE = (1280, 1000), (375, 1000)
MAJOR_OUTAGE = next(colour for status, _, colour in BAR_STYLES if status == "major_outage")
BAR_COLOURS = [colour for _, _, colour in BAR_STYLES] + [NO_DATA_COLOUR]


@pytest.fixture(scope="module")
def outage_page(stack: LocalStack) -> str:
    """A page whose one component went down and came back today; its public URL."""
    base = "/api/v1/status-pages"
    page = stack.post(base, json={"name": "Uptime test", "slug": "uptime-test"}).json()["data"]
    section = stack.post(f"{base}/{page['id']}/sections", json={"name": "Core"}).json()["data"]
    component = stack.post(
        f"{base}/{page['id']}/components", json={"name": "Search", "section_id": section["id"]}
    ).json()["data"]
    for status in ("major_outage", "operational"):
        answer = stack.session.patch(
            f"{stack.base_url}{base}/{page['id']}/components/{component['id']}",
            headers=stack.headers(),
            json={"status": status},
        )
        assert answer.status_code == 200, answer.text
    return str(page["url"])


def strips(document: Element) -> list[Element]:
    return document.find_all("ol", cls="bars")


def test_uptime_json_names_todays_outage(stack: LocalStack, outage_page: str):
    answer = requests.get(f"{outage_page}/uptime.json", timeout=10)
    assert answer.status_code == 200 and answer.headers["Cache-Control"] == "public, max-age=30"
    (component,) = answer.json()["components"]
    assert component["name"] == "Search" and len(component["days"]) == 90
    assert component["days"][-1]["worst_status"] == "major_outage"
    assert component["days"][0] == {"date": answer.json()["start_date"], "uptime_percent": None, "worst_status": None}


def test_90_bars_per_component_each_with_its_day_in_words(outage_page: str):
    rendered = parse(dump_dom(outage_page))
    assert rendered.find_all("script") == []
    (strip,) = strips(rendered)
    assert strip.attrs["aria-label"] == "Search: uptime per day, last 90 days, oldest first"
    bars = strip.find_all("li")
    assert len(bars) == 90
    for bar in bars:  # text for screen readers, the same words for a pointer
        assert bar.find("span", cls="vh").text() == bar.attrs["title"] and bar.text()
    assert bars[0].text().endswith(": no data")
    assert bars[-1].text().endswith("uptime, worst: major outage") and bars[-1].classes == {"up-major_outage"}
    uptime = rendered.find("li", cls="uptime")
    assert "uptime over 90 days" in uptime.find("p", cls="scale").text()
    assert uptime.find("details").find("summary").text() == "1 day not fully operational"


def test_the_demo_page_has_bars_for_every_component(stack: LocalStack):
    rendered = parse(dump_dom(f"{stack.base_url}/status/tocsin-demo"))
    assert [len(strip.find_all("li")) for strip in strips(rendered)] == [90, 90, 90]
    labels = [strip.attrs["aria-label"] or "" for strip in strips(rendered)]
    assert [label.split(":")[0] for label in labels] == ["Dashboard", "Checkout API", "Billing API"]


# ---------------------------------------------------------------- pixels


def pixels(png: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and the RGB(A) rows of an 8-bit, non-interlaced PNG (what Chromium writes)."""
    data = png.read_bytes()
    width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", data[16:29])
    assert depth == 8 and interlace == 0 and colour_type in (2, 6)
    channels = 4 if colour_type == 6 else 3
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        if data[offset + 4 : offset + 8] == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    raw, stride, rows, previous = zlib.decompress(b"".join(chunks)), width * channels, [], bytes(width * channels)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up, corner = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                near = min((abs(guess - left), 0, left), (abs(guess - up), 1, up), (abs(guess - corner), 2, corner))
                line[x] = (line[x] + near[2]) & 0xFF
        rows.append(bytes(line))
        previous = bytes(line)
    return width, channels, rows


def is_colour(pixel: bytes, colour: str) -> bool:
    wanted = bytes.fromhex(colour[1:])
    return all(abs(a - b) <= 8 for a, b in zip(pixel[:3], wanted, strict=True))


def bars_on_screen(png: Path) -> int:
    """How many bars a horizontal line through the bottom of the strip crosses: runs (2 px or more,
    so a 1 px card border does not count) of bar colours, on the line just above the lowest pixel
    of today's red bar (its rounded corner aside)."""
    width, channels, rows = pixels(png)
    red_rows = [
        y
        for y, row in enumerate(rows)
        if any(is_colour(row[x * channels : x * channels + 3], MAJOR_OUTAGE) for x in range(width))
    ]
    assert red_rows, "today's major outage bar is not on the screenshot"
    row = rows[max(red_rows) - 3]
    runs = length = 0
    for x in range(width):
        pixel = row[x * channels : x * channels + 3]
        if any(is_colour(pixel, colour) for colour in BAR_COLOURS):
            length += 1
            continue
        runs += length >= 2
        length = 0
    return runs + (length >= 2)


@pytest.mark.parametrize(("viewport", "shown"), [(DESKTOP, 90), (PHONE, 30)])
def test_the_bars_are_drawn_side_by_side(outage_page: str, tmp_path: Path, viewport: tuple[int, int], shown: int):
    # A phone shows the last 30 days (the older 60 stay in the list for screen readers).
    shot = screenshot(outage_page, tmp_path / f"uptime-{viewport[0]}.png", width=viewport[0], height=viewport[1])
    assert bars_on_screen(shot) == shown
