"""The console over real HTTP on the local stack: how long its pages and forms take.

    .venv/bin/python bench/console_pages.py [--rounds 30] [--incidents 60]

Starts `python -m chalicelib.local` in a temporary directory (stopped at the end), opens
`--incidents` incidents through the API, signs in as the demo responder through the sign-in form
(Cognito on the emulator), then times, each `--rounds` times: the incident list (the default open
filter, 25 a page), one incident's page, posting a comment (a write, answered by a 303), and
signing in; and the API's list of the same page, for comparison. Then, signed in as the demo
owner, the pages that set things up: people, a person's page, teams, a team's page, the
organization settings, and the "Assigned to me" view, next to the incident list as the owner
sees it; the on-call page, the demo schedule's page, its editor and a Preview
(bench/schedule_editor_pages.py). Prints p50/p95/max per request in milliseconds and the
targets. Never fails on them.
"""

from __future__ import annotations

import argparse
import functools
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import _stack  # noqa: E402
from bench.schedule_editor_pages import time_schedule_pages  # noqa: E402

P50_TARGET_MS = 200.0
P95_TARGET_MS = 500.0
_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def _token(html: str) -> str:
    found = _TOKEN.search(html)
    if not found:
        raise RuntimeError("no CSRF token on the page")
    return found.group(1)


def _timed(rounds: int, request: Callable[[], requests.Response], expect: int) -> list[float]:
    took = []
    for _ in range(rounds):
        began = time.perf_counter()
        answer = request()
        took.append((time.perf_counter() - began) * 1000)
        if answer.status_code != expect:
            raise RuntimeError(f"{answer.request.method} {answer.url}: {answer.status_code}, expected {expect}")
    return took


def _line(name: str, took: list[float]) -> str:
    ordered = sorted(took)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    return f"  {name:<32} p50 {statistics.median(ordered):7.1f}   p95 {p95:7.1f}   max {ordered[-1]:7.1f}"


def _setup_pages(
    base: str,
    api: dict[str, str],
    demo: dict[str, Any],
    sign_in: Callable[[str], requests.Response],
    rounds: int,
) -> dict[str, list[float]]:
    """The people, teams and settings pages as the owner (the only roles that see all of them)."""
    browser = requests.Session()
    browser.cookies.update(sign_in("owner").cookies)
    team = requests.post(base + "/api/v1/teams", headers=api, json={"name": "Bench team"}, timeout=30)
    team.raise_for_status()
    team_id = team.json()["data"]["id"]
    users = requests.get(base + "/api/v1/users", headers=api, timeout=30)
    users.raise_for_status()
    user_id = users.json()["data"]["items"][0]["id"]
    pages = {
        "GET /app/incidents (owner)": "/app/incidents",
        "GET /app/incidents?assigned=me": "/app/incidents?assigned=me",
        "GET /app/people": "/app/people",
        "GET /app/people/{id}": f"/app/people/{user_id}",
        "GET /app/teams": "/app/teams",
        "GET /app/teams/{id}": f"/app/teams/{team_id}",
        "GET /app/settings": "/app/settings",
    }
    return {
        name: _timed(rounds, functools.partial(browser.get, base + path, timeout=30), 200)
        for name, path in pages.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--incidents", type=int, default=60)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tocsin-console-bench-") as directory:
        stack = _stack.start(Path(directory), fresh=True, environment={"RATE_LIMIT_SESSION": "100000"})
        try:
            base = stack.base_url
            api = {"Authorization": f"Bearer {stack.owner_key}"}
            service_key = stack.demo["services"][0]["service_key"]
            numbers = []
            for index in range(arguments.incidents):
                created = requests.post(
                    base + "/api/v1/incidents",
                    headers=api,
                    json={"title": f"Bench incident {index}", "service_ids": [service_key], "severity": "SEV3"},
                    timeout=30,
                )
                created.raise_for_status()
                numbers.append(created.json()["data"]["incident_number"])
            people = {u["role"]: u for u in stack.demo["console"]["users"]}
            browser = requests.Session()

            def sign_in(role: str = "responder") -> requests.Response:
                fresh = requests.Session()
                form = {"email": people[role]["email"], "password": people[role]["password"]}
                token = _token(fresh.get(base + "/app/sign-in", timeout=30).text)
                return fresh.post(
                    base + "/app/sign-in", data={**form, "csrf_token": token}, allow_redirects=False, timeout=30
                )

            signed = sign_in()
            browser.cookies.update(signed.cookies)
            incident = numbers[-1]
            page = browser.get(f"{base}/app/incidents/{incident}", timeout=30)
            token = _token(page.text)
            results = {
                "GET /api/v1/incidents (API)": _timed(
                    arguments.rounds,
                    lambda: requests.get(base + "/api/v1/incidents?limit=25", headers=api, timeout=30),
                    200,
                ),
                "GET /app/incidents": _timed(
                    arguments.rounds, lambda: browser.get(base + "/app/incidents", timeout=30), 200
                ),
                "GET /app/incidents/{number}": _timed(
                    arguments.rounds, lambda: browser.get(f"{base}/app/incidents/{incident}", timeout=30), 200
                ),
                "POST .../comment": _timed(
                    arguments.rounds,
                    lambda: browser.post(
                        f"{base}/app/incidents/{incident}/comment",
                        data={"csrf_token": token, "comment": "Still looking."},
                        allow_redirects=False,
                        timeout=30,
                    ),
                    303,
                ),
                "POST /app/sign-in": _timed(max(5, arguments.rounds // 3), sign_in, 303),
            }
            results.update(_setup_pages(base, api, stack.demo, sign_in, arguments.rounds))
            owner = requests.Session()
            owner.cookies.update(sign_in("owner").cookies)
            results |= time_schedule_pages(
                _timed, arguments.rounds, base, owner, api, stack.demo["on_call"]["schedule_id"]
            )
        finally:
            _stack.stop(stack)
    print(f"Console over HTTP, {arguments.incidents} open incidents, {arguments.rounds} rounds (milliseconds):")
    for name, took in results.items():
        print(_line(name, took))
    print(f"  targets: p50 <= {P50_TARGET_MS:.0f} ms, p95 <= {P95_TARGET_MS:.0f} ms per page on this machine")
    return 0


if __name__ == "__main__":
    sys.exit(main())
