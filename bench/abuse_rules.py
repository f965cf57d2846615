"""Issue 27, finding 7 replayed on the local stack: what event rules cost per event.

    .venv/bin/python bench/abuse_rules.py [--events 2] [--stack-root PATH] [--base-url URL --owner-key KEY]

Starts a local stack (`python -m chalicelib.local`, fresh, in a temporary directory; `--stack-root`
runs another checkout, to measure before a change) unless --base-url names a running one. Then:

0. the baseline: seconds per event through a new custom integration without rules;
1. the probe's list: 99 rules of 16 `matches` conditions (`(?:.{1,50}){1,5}$`, over 2,000 RE2
   instructions, each on one of ten labels) written to a new custom integration's list through
   the API: how many rules were accepted, and the first refusal;
2. seconds per event through that integration: custom webhooks whose ten labels are 1,000 "é"
   each (RE2's slow mode), timed at the client, with the answer's status;
3. the heaviest list the budget takes: rules of 16 `.{0,50}$` conditions, then of one, until
   refused; seconds per event;
4. a list stored before the budget existed (the probe's list written straight into the
   emulator's table, past every check): seconds per event, whether the event was kept and paged
   (201, not suppressed), and the warning;
5. the dry run: a reader's (integrations:read) status code, and the owner's seconds on list 4.

Prints what got through; never fails on the figures, always exits 0.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import _stack  # noqa: E402

PROBE_PATTERN = r"(?:.{1,50}){1,5}$"
HEAVIEST_ALLOWED = r".{0,50}$"
RULES, CONDITIONS, LABELS = 99, 16, 10
LABEL_TEXT = "é" * 1000
TIMEOUT = 300


@dataclass
class Target:
    base_url: str
    owner_key: str
    service_id: str = ""  # the service every probe event names (the stack's first)

    def call(self, method: str, path: str, body: Any = None, key: str | None = None) -> requests.Response:
        headers = {"Authorization": f"Bearer {key or self.owner_key}", "X-Forwarded-Proto": "https"}
        return requests.request(method, self.base_url + path, headers=headers, json=body, timeout=TIMEOUT)


def conditions(pattern: str, count: int) -> list[dict[str, str]]:
    return [{"field": f"labels.l{n % LABELS}", "op": "matches", "value": pattern} for n in range(count)]


def new_integration(target: Target, name: str) -> dict[str, Any]:
    answer = target.call("POST", "/api/v1/integrations", {"type": "custom", "name": name})
    answer.raise_for_status()
    return dict(answer.json()["data"])


def write_rules(target: Target, integration_id: str, pattern: str, per_rule: int, most: int) -> tuple[int, str]:
    """(rules accepted, the first refusal) writing up to `most` rules of `per_rule` conditions."""
    path = f"/api/v1/integrations/{integration_id}/event-rules"
    for written in range(most):
        body = {"conditions": conditions(pattern, per_rule), "actions": {"note": "abuse"}, "continue": True}
        answer = target.call("POST", path, body)
        if answer.status_code != 201:
            error = answer.json().get("error", {})
            fields = [f"{f['field']}: {f['message']}" for f in error.get("details", {}).get("fields", [])]
            return written, f"{answer.status_code} {'; '.join(fields) or error.get('message')}"
    return most, ""


def seconds_per_event(target: Target, integration: dict[str, Any], events: int) -> tuple[float, list[str]]:
    """Mean client-side seconds per webhook, and each answer as `status suppressed=...`."""
    url = str(integration.get("url") or f"{target.base_url}/webhooks/{integration['routing_key']}")
    answers, spent = [], 0.0
    for _ in range(events):
        body = {
            "title": "Abuse probe: heavy labels",
            "service_id": target.service_id,
            "severity": "SEV3",
            "dedup_key": secrets.token_hex(8),
            "metadata": {f"l{n}": LABEL_TEXT for n in range(LABELS)},
        }
        began = time.perf_counter()
        answer = requests.post(url, json=body, headers={"X-Forwarded-Proto": "https"}, timeout=TIMEOUT)
        spent += time.perf_counter() - began
        document = answer.json() if answer.content else {}
        if answer.status_code >= 400:
            answers.append(f"{answer.status_code} {document.get('error', {}).get('message')}")
        else:
            answers.append(f"{answer.status_code} suppressed={document.get('suppressed')}")
    return spent / max(events, 1), answers


def plant_probe_list(demo: dict[str, Any], integration_id: str) -> None:
    """The probe's list stored as it could be before the budget: straight into the emulator."""
    _stack.aws_environment(demo)
    from chalicelib import aws
    from chalicelib.eventrule.rules import Actions, Condition, Rule, rule_to_item
    from chalicelib.eventrule.tables import EventRuleSetRecord, list_key

    aws.bind_tables()

    now = datetime.now(UTC)
    rules = [
        Rule(
            rule_id=f"evr_{secrets.token_hex(16)}",
            conditions=tuple(
                Condition(c["field"], "matches", c["value"]) for c in conditions(PROBE_PATTERN, CONDITIONS)
            ),
            actions=Actions(note="stored before the budget"),
            continues=True,
            description=None,
            version=1,
            created_at=now,
        )
        for _ in range(RULES)
    ]
    record = EventRuleSetRecord(str(demo["organization_id"]), list_key(integration_id))
    record.rules_json = json.dumps([rule_to_item(rule) for rule in rules])
    record.updated_at = now
    record.save()


def dry_run(target: Target, integration_id: str, key: str | None = None) -> tuple[int, float, list[str]]:
    body = {
        "title": "dry run",
        "integration_id": integration_id,
        "labels": {f"l{n}": LABEL_TEXT for n in range(LABELS)},
    }
    began = time.perf_counter()
    answer = target.call("POST", "/api/v1/event-rules/test", body, key=key)
    seconds = time.perf_counter() - began
    warnings = list(answer.json().get("data", {}).get("warnings", [])) if answer.status_code == 200 else []
    return answer.status_code, seconds, warnings


def reader_key(target: Target) -> str:
    answer = target.call(
        "POST", "/api/v1/api-keys", {"name": "abuse reader", "kind": "service_account", "scopes": ["integrations:read"]}
    )
    answer.raise_for_status()
    return str(answer.json()["data"]["key"])


def run(target: Target, demo: dict[str, Any] | None, events: int) -> None:
    services = target.call("GET", "/api/v1/services?limit=1")
    services.raise_for_status()
    target.service_id = str(services.json()["data"]["items"][0]["service_id"])
    baseline, answers = seconds_per_event(target, new_integration(target, "abuse: no rules"), events)
    print(f"0. baseline, no rules: {baseline:.3f} s per event ({', '.join(answers)})")
    probe = new_integration(target, "abuse: the probe's list")
    accepted, refusal = write_rules(target, probe["id"], PROBE_PATTERN, CONDITIONS, RULES)
    print(f"1. probe list ({RULES} rules x {CONDITIONS} `{PROBE_PATTERN}`): {accepted} rules accepted")
    if refusal:
        print(f"   first refusal: {refusal}")
    mean, answers = seconds_per_event(target, probe, events)
    print(f"2. events through it: {mean:.2f} s per event ({', '.join(answers)})")

    heaviest = new_integration(target, "abuse: the heaviest list allowed")
    wide, refusal = write_rules(target, heaviest["id"], HEAVIEST_ALLOWED, CONDITIONS, RULES)
    narrow, refusal = write_rules(target, heaviest["id"], HEAVIEST_ALLOWED, 1, RULES) if refusal else (0, refusal)
    mean, answers = seconds_per_event(target, heaviest, events)
    print(
        f"3. heaviest list accepted (`{HEAVIEST_ALLOWED}`): {wide} rules of {CONDITIONS} + {narrow} of 1; "
        f"{mean:.3f} s per event ({', '.join(answers)})"
    )
    if refusal:
        print(f"   refused then: {refusal}")

    if demo is None:
        print("4./5. skipped: planting a list needs the stack's emulator (run without --base-url)")
        return
    legacy = new_integration(target, "abuse: a list stored before the budget")
    plant_probe_list(demo, legacy["id"])
    mean, answers = seconds_per_event(target, legacy, events)
    print(f"4. list stored before the budget ({RULES} x {CONDITIONS}): {mean:.2f} s per event ({', '.join(answers)})")
    status, _, _ = dry_run(target, legacy["id"], key=reader_key(target))
    owner_status, seconds, warnings = dry_run(target, legacy["id"])
    print(f"5. dry run: a reader gets {status}; the owner {owner_status} in {seconds:.2f} s")
    for warning in warnings:
        print(f"   warning: {warning}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=2, help="webhooks timed per list")
    parser.add_argument("--stack-root", type=Path, default=ROOT, help="the checkout whose stack is started")
    parser.add_argument("--base-url", default=None, help="a running stack (then --owner-key too)")
    parser.add_argument("--owner-key", default=None)
    arguments = parser.parse_args(argv)
    if arguments.base_url:
        run(Target(arguments.base_url, arguments.owner_key or ""), None, arguments.events)
        return 0
    local_dir = Path(tempfile.mkdtemp(prefix="tocsin-abuse-rules-")) / "local"
    print(f"Starting a local stack from {arguments.stack_root} ...", flush=True)
    stack = _stack.start(local_dir, fresh=True, root=arguments.stack_root, environment={"RATE_LIMIT_WEBHOOK": "100000"})
    try:
        run(Target(stack.base_url, stack.owner_key), stack.demo, arguments.events)
    finally:
        _stack.stop(stack)
    return 0


if __name__ == "__main__":
    sys.exit(main())
