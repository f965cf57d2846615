"""The e2e import tests' helpers: run the `tocsin` command as a person would (a process, its
credentials in the environment), read Tocsin back through its API, wait for an incident."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from random import Random
from typing import Any

from chalicelib.auth.scopes import ALL_SCOPES
from tests.e2e.conftest import ROOT, LocalStack, start_stack, stop_stack

# A real-sized import makes about a thousand API calls in its first minute; at the default 600 a
# minute per key the command met Tocsin's 429 twice and waited out the window (~45 s idle per
# run). Its waiting is the client's tested behaviour (tests/unit/test_client_http.py); these tests
# are about what arrives, so their stack allows more. The vendor's 429 stays in the tests.
IMPORT_RATE_LIMIT = "100000"


def import_stack(tmp_path_factory: Any) -> Iterator[LocalStack]:
    """A module's stack for the import tests (see IMPORT_RATE_LIMIT)."""
    running = start_stack(tmp_path_factory.mktemp("stack"), RATE_LIMIT_API_KEY=IMPORT_RATE_LIMIT)
    yield running
    stop_stack(running)


class Checker:
    """Reads Tocsin back with a key of its own: the import spends much of the owner key's rate
    budget for the minute, and the checks must not wait on it."""

    def __init__(self, stack: LocalStack) -> None:
        made = stack.post("/api/v1/api-keys", json={"name": "import checks", "scopes": list(ALL_SCOPES)})
        assert made.status_code == 201, made.text
        self.stack = stack
        self.key = str(made.json()["data"]["key"])

    def get(self, path: str, **params: Any) -> Any:
        answer = self.stack.get(path, key=self.key, params=params)
        assert answer.status_code == 200, answer.text
        return answer.json()["data"]

    def post(self, path: str, body: Any = None) -> Any:
        answer = self.stack.post(path, key=self.key, json=body or {})
        assert answer.status_code in (200, 201), answer.text
        return answer.json()["data"]


def tocsin(
    stack: LocalStack, *argv: str, env: dict[str, str], key: str | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "TOCSIN_URL": stack.base_url,
        "TOCSIN_API_KEY": key or stack.demo["api_keys"]["owner"],
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "chalicelib.client", *argv],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def trusting(ca: Path) -> dict[str, str]:
    """The stand-in's private CA, named as a person would for a TLS-intercepting proxy."""
    return {"SSL_CERT_FILE": str(ca)}


def all_items(checker: Checker, path: str, **params: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    offset = 0
    while True:
        page = checker.get(path, **params, limit=100, offset=offset)
        found += page["items"]
        if not page.get("has_more"):
            return found
        offset = int(page["next_offset"])


def imported(checker: Checker, vendor: str, kind: str) -> dict[str, str]:
    """vendor id -> Tocsin id, from the import ledger."""
    return {
        ref["external_id"]: ref["tocsin_id"]
        for ref in all_items(checker, "/api/v1/external-refs", vendor=vendor)
        if ref["kind"] == kind
    }


def instants(count: int = 10, weeks: int = 4, seed: int = 28) -> list[datetime]:
    """`count` instants over the next `weeks`, whole seconds, fixed by the seed."""
    now = datetime.now(UTC).replace(microsecond=0)
    rolls = Random(seed)
    return sorted(now + timedelta(seconds=rolls.randrange(300, weeks * 7 * 86400)) for _ in range(count))


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def tocsin_on_call(checker: Checker, schedule_id: str, moment: datetime) -> str | None:
    found = checker.get(
        f"/api/v1/schedules/{schedule_id}/shifts", since=iso(moment), until=iso(moment + timedelta(seconds=1))
    )
    shifts = found["shifts"]
    return str(shifts[0]["user"]["email"]) if shifts else None


def incident_titled(checker: Checker, title: str, seconds: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        found = [i for i in all_items(checker, "/api/v1/incidents") if i["title"] == title]
        if found:
            incident = dict(checker.get(f"/api/v1/incidents/{found[0]['incident_number']}"))
            if any(str(e.get("title", "")).startswith("Paged ") for e in incident["timeline"]):
                return incident
        assert time.monotonic() < deadline, f"no paged incident titled {title!r}"
        time.sleep(0.5)


def json_out(ran: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert ran.returncode == 0, ran.stderr[-3000:]
    return dict(json.loads(ran.stdout))
