"""Screenshots of the console on a running local stack, desktop and phone, signed in as the demo
owner: the incident list, "Assigned to me", an incident's page, people, a person, teams, a team,
the organization settings, and the phone menu opened.

    python scripts/console_screenshot.py [DEMO_JSON] [OUT_DIR]

DEMO_JSON is the stack's `.local/demo.json` (its URLs, API keys and console users); OUT_DIR
defaults to .local/screenshots. A fresh stack has no incidents, so the script opens a few demo
incidents through the API first (only those not already open, so running it again adds none),
and a demo team the same way.
It fails when a page scrolls sideways on the phone-width window.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from scripts.chromium_cdp import Tab
from scripts.status_screenshot import VIEWPORTS, BrowserError

# (title, service index in demo.json, severity, description)
DEMO_INCIDENTS = (
    (
        "Checkout latency above 2 s",
        0,
        "SEV1",
        "The eu-west-1 probe sees p99 at 2.4 s since 05:40 UTC.\nDashboards: checkout / latency.",
    ),
    ("Invoices stuck in the renewal queue", 1, "SEV3", "About 120 renewals waiting for more than an hour."),
    ("Payment gateway returns 502 for some EU cards", 0, "SEV2", None),
)
SHOWN_INCIDENT = DEMO_INCIDENTS[0][0]
DEMO_TEAM = "Commerce"
COMMENT = "Rolled back the 05:30 deploy; watching p99."


def _api(demo: dict[str, Any], method: str, path: str, body: Any = None) -> Any:
    request = urllib.request.Request(
        str(demo["base_url"]) + path,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {demo['api_keys']['owner']}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=15) as answer:
            return json.loads(answer.read())["data"]
    except urllib.error.HTTPError as error:
        raise BrowserError(f"{method} {path} answered {error.code}: {error.read()[:300]!r}") from error
    except (urllib.error.URLError, OSError) as error:
        raise BrowserError(f"cannot reach {path} ({error}); is the stack running (`make run`)?") from error


def ensure_demo_incidents(demo: dict[str, Any]) -> str:
    """Open the demo incidents that are not open yet; the number of the one the page shot shows."""
    open_now = {
        item["title"]: item["incident_number"] for item in _api(demo, "GET", "/api/v1/incidents?limit=100")["items"]
    }
    for title, service_index, severity, description in reversed(DEMO_INCIDENTS):  # the list shows newest first
        if title in open_now:
            continue
        body = {"title": title, "service_ids": [demo["services"][service_index]["service_key"]], "severity": severity}
        if description:
            body["description"] = description
        number = _api(demo, "POST", "/api/v1/incidents", body)["incident_number"]
        open_now[title] = number
        if title == SHOWN_INCIDENT:
            _api(demo, "POST", f"/api/v1/incidents/{number}/events", {"comment": COMMENT})
    return str(open_now[SHOWN_INCIDENT])


def ensure_demo_team(demo: dict[str, Any]) -> str:
    """The demo team's id, made (with the console's demo people in it) when it is not there yet."""
    teams = _api(demo, "GET", "/api/v1/teams?limit=100")["items"]
    found = [team["id"] for team in teams if team["name"] == DEMO_TEAM]
    if found:
        return str(found[0])
    users = _api(demo, "GET", "/api/v1/users?limit=100")["items"]
    body = {
        "name": DEMO_TEAM,
        "description": "Checkout, payments and invoices",
        "member_ids": [u["id"] for u in users],
    }
    return str(_api(demo, "POST", "/api/v1/teams", body)["id"])


def take(demo: dict[str, Any], out_dir: Path) -> list[Path]:
    number = ensure_demo_incidents(demo)
    team_id = ensure_demo_team(demo)
    console = demo["console"]
    owner = next(user for user in console["users"] if user["role"] == "owner")
    responder = next(
        user for user in _api(demo, "GET", "/api/v1/users?limit=100")["items"] if user["role"] == "responder"
    )
    pages = (
        ("console-incidents", "/incidents"),
        ("console-assigned-to-me", "/incidents?assigned=me&refresh=30"),
        ("console-incident", f"/incidents/{number}"),
        ("console-people", "/people"),
        ("console-person", f"/people/{responder['id']}"),
        ("console-teams", "/teams"),
        ("console-team", f"/teams/{team_id}"),
        ("console-settings", "/settings"),
    )
    written = []
    with Tab() as tab:
        tab.open(console["url"] + "/sign-in")
        tab.type_into("Email", owner["email"])
        tab.type_into("Password", owner["password"])
        tab.click("Sign in")
        for name, path in pages:
            tab.open(console["url"] + path)
            for viewport, width, height in VIEWPORTS:
                written.append(tab.screenshot(out_dir / f"{name}-{viewport}.png", width=width, height=height))
                if width < 600 and tab.overflows_horizontally():
                    raise BrowserError(f"{path} scrolls sideways at {width} px")
        # The phone menu opened, as a tap on "Menu" would (a <details>: no script of the page's).
        _, width, height = VIEWPORTS[-1]
        tab.open(console["url"] + "/incidents")
        tab.resize(width, height)
        tab.evaluate("document.querySelector('details.menu-phone').open = true")
        written.append(tab.screenshot(out_dir / "console-menu-phone.png", width=width, height=height, full_page=False))
    return written


def main(argv: list[str]) -> int:
    demo_path = Path(argv[0] if argv else ".local/demo.json")
    out_dir = Path(argv[1] if len(argv) > 1 else ".local/screenshots")
    if not demo_path.is_file():
        print(f"error: {demo_path} is missing; start the stack first (`make run`)", file=sys.stderr)
        return 1
    try:
        for path in take(json.loads(demo_path.read_text()), out_dir):
            print(path)
    except BrowserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
