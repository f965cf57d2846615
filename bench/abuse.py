"""Issue 27's probe replayed on the local stack: what gets through (findings 1-4, and 7's figure).

    .venv/bin/python bench/abuse.py [--burst-minutes 1] [--stack-root PATH] [--base-url URL [--owner-key KEY]]

Starts a local stack (`python -m chalicelib.local`, fresh, in a temporary directory, as
bench/_stack.py does; `--stack-root` runs another checkout, to measure before a change) unless
`--base-url` names a running one, then replays each abuse scenario over HTTP and counts what the
stack sent from its outbox (GET /local/outbox), per destination:

1. verification loop: a viewer (Vera, through a personal key of her own) creates an SMS or voice
   method for one number, asks for its code and deletes it, 12 times; the answers, and the SMS and
   calls that reached the number;
2. SMS reflection: 10 inbound SMS from one unknown number, then one each from 10 unknown
   numbers, published to the emulator's inbound topic; the replies per number;
3. pages: 3 SEV1 incidents (a legitimate burst: every one must page at once), then, in a fresh
   burst window, 10 more as fast as the stack takes them; the incidents each person's phone,
   mailbox and Slack was paged for within 8 s, and those the digest named once the window ended.
   The stack's burst window is `--burst-minutes` (1; the default of a deployment is 10), so the
   digest comes within the run;
4. email variants: 9 subscriptions to the demo status page for one Gmail mailbox spelled
   `victim+N@`, with capitals, dots and googlemail.com; the confirmations that reached it;
7. event rules: seconds per event with 99 rules of 16 `matches` conditions, measured by
   bench/abuse_rules.py (issue 27 part B) when it is in this tree.

Prints a summary table of what got through; never fails on the figures, always exits 0.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import _stack  # noqa: E402
from bench._support import table  # noqa: E402
from chalicelib.budget.destinations import destination_key  # noqa: E402

VICTIM_PHONE = "+15550190000"
UNKNOWN_PHONE = "+15550191111"
VICTIM_MAILBOX = "victim@gmail.com"
VICTIM_SPELLINGS = [
    "victim@gmail.com",
    "Victim@Gmail.com",
    "victim+1@gmail.com",
    "v.i.c.t.i.m@gmail.com",
    "VICTIM+2@gmail.com",
    "victim+3@googlemail.com",
    "vic.tim+4@googlemail.com",
    "victim+5@GMAIL.COM",
    "victim+6@gmail.com",
]
TIMEOUT = 60


@dataclass
class Target:
    base_url: str
    owner_key: str
    demo: dict[str, Any]
    burst_minutes: float

    def call(self, method: str, path: str, body: Any = None, key: str | None = None) -> requests.Response:
        headers = {"Authorization": f"Bearer {key or self.owner_key}"}
        return requests.request(method, self.base_url + path, headers=headers, json=body, timeout=TIMEOUT)

    def outbox(self, channel: str) -> list[dict[str, Any]]:
        answer = self.call("GET", f"/local/outbox?channel={channel}&limit=500")
        answer.raise_for_status()
        return list(answer.json()["data"]["items"])


@dataclass
class Row:
    finding: str
    scenario: str
    tried: str
    through: str
    detail: str


def settle(count: Callable[[], int], *, at_least: float = 3.0, most: float = 30.0) -> int:
    """The count once it has stopped changing for `at_least` seconds (or after `most`)."""
    began = time.monotonic()
    last, since = count(), time.monotonic()
    while time.monotonic() - began < most:
        time.sleep(0.5)
        now = count()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= at_least:
            break
    return last


def sent_to(target: Target, channel: str, address: str) -> list[dict[str, Any]]:
    key = destination_key(channel, address)
    return [item for item in target.outbox(channel) if destination_key(channel, str(item.get("to") or "")) == key]


# ---------------------------------------------------------------- 1. verification loop


def verification_loop(target: Target) -> Row:
    vera = next(user for user in target.demo["users"] if user["email"].startswith("vera@"))
    created = target.call(
        "POST",
        "/api/v1/api-keys",
        {"name": "abuse probe", "kind": "personal", "scopes": ["incidents:write"], "user_id": vera["id"]},
    )
    created.raise_for_status()
    key = str(created.json()["data"]["key"])
    methods = f"/api/v1/users/{vera['id']}/contact-methods"
    statuses: Counter[int] = Counter()
    retry_after = ""
    began = time.monotonic()
    for round_ in range(12):
        kind = "sms" if round_ % 2 == 0 else "voice"
        method = target.call("POST", methods, {"type": kind, "address": VICTIM_PHONE}, key)
        method.raise_for_status()
        method_id = method.json()["data"]["id"]
        answer = target.call("POST", f"{methods}/{method_id}/send-verification", None, key)
        statuses[answer.status_code] += 1
        retry_after = answer.headers.get("Retry-After", retry_after)
        target.call("DELETE", f"{methods}/{method_id}", None, key)
    seconds = time.monotonic() - began
    texts = settle(lambda: len(sent_to(target, "sms", VICTIM_PHONE)) + len(sent_to(target, "voice", VICTIM_PHONE)))
    sms, calls = len(sent_to(target, "sms", VICTIM_PHONE)), len(sent_to(target, "voice", VICTIM_PHONE))
    print(f"1. verification loop: 12 rounds in {seconds:.1f} s; answers {dict(sorted(statuses.items()))}")
    print(
        f"   {VICTIM_PHONE} got {sms} SMS and {calls} calls (Retry-After of the last refusal: {retry_after or '-'} s)"
    )
    return Row("1", "create, send code, delete x12 (a viewer)", "12 codes", str(texts), f"{sms} SMS + {calls} calls")


# ---------------------------------------------------------------- 2. SMS reflection


def _publish_inbound(target: Target, sender: str, body: str) -> None:
    import boto3

    sns: Any = boto3.client(
        "sns",
        endpoint_url=target.demo["aws_endpoint_url"],
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    message = {
        "originationNumber": sender,
        "destinationNumber": "+15550009999",
        "messageKeyword": "KEYWORD_123456789012",
        "messageBody": body,
        "inboundMessageId": f"abuse-{uuid.uuid4().hex}",
    }
    sns.publish(TopicArn=target.demo["sms_inbound"]["topic_arn"], Message=json.dumps(message))


def sms_reflection(target: Target) -> list[Row]:
    for n in range(10):
        _publish_inbound(target, UNKNOWN_PHONE, f"hello {n}")
    one = settle(lambda: len(sent_to(target, "sms", UNKNOWN_PHONE)))
    senders = [f"+1555019{2000 + n}" for n in range(10)]
    for sender in senders:
        _publish_inbound(target, sender, "hello")
    many = settle(lambda: sum(len(sent_to(target, "sms", sender)) for sender in senders))
    print(f"2. SMS reflection: 10 inbound from {UNKNOWN_PHONE} -> {one} replies; 1 each from 10 numbers -> {many}")
    return [
        Row("2", "10 inbound SMS from one unknown number", "10 replies", str(one), f"{UNKNOWN_PHONE}: {one}"),
        Row("2", "1 inbound SMS from each of 10 numbers", "10 replies", str(many), "1 a number at most"),
    ]


# ---------------------------------------------------------------- 3. pages


def _open(target: Target, count: int, label: str) -> list[str]:
    url = target.demo["integrations"]["custom"]["url"]
    service_id = target.demo["services"][0]["service_id"]
    numbers = []
    for index in range(count):
        body = {
            "title": f"Abuse probe {label} {index}",
            "service_id": service_id,
            "severity": "SEV1",
            "dedup_key": f"abuse-{uuid.uuid4().hex}",
        }
        answer = requests.post(url, json=body, timeout=TIMEOUT)
        answer.raise_for_status()
        numbers.append(str(answer.json()["incident"]["id"]))
    return numbers


def _reached(target: Target, numbers: list[str]) -> dict[str, set[str]]:
    """Destination -> the incidents of `numbers` a page to it named (digests apart)."""
    found: dict[str, set[str]] = {}
    for channel in ("sms", "voice", "email", "slack"):
        for item in target.outbox(channel):
            text = f"{item.get('subject') or ''} {item.get('text') or ''}"
            if "more incident" in text:
                continue
            named = {number for number in numbers if item.get("incident_number") == number or number in text}
            if named:
                found.setdefault(f"{channel} {item.get('to')}", set()).update(named)
    return found


def _digests(target: Target, numbers: list[str]) -> dict[str, set[str]]:
    """Destination -> the incidents of `numbers` its digests named."""
    found: dict[str, set[str]] = {}
    for channel in ("sms", "voice", "email", "slack"):
        for item in target.outbox(channel):
            text = f"{item.get('subject') or ''} {item.get('text') or ''}"
            if "more incident" in text:
                named = {number for number in numbers if number in text}
                found.setdefault(f"{channel} {item.get('to')}", set()).update(named)
    return found


def _resolve(target: Target, numbers: list[str]) -> None:
    for number in numbers:
        target.call("POST", f"/api/v1/incidents/{number}/resolve", {"resolution": "bench/abuse.py"})


def _counts(found: dict[str, set[str]]) -> str:
    return ", ".join(f"{where}: {len(numbers)}" for where, numbers in sorted(found.items())) or "none"


def _wait_for_a_fresh_window(window: float) -> None:
    """Until the previous pages have slid out of the burst count: the next window's start, then one more."""
    time.sleep(window - time.time() % window + window + 1)


def pages(target: Target) -> list[Row]:
    window = target.burst_minutes * 60.0
    legit = _open(target, 3, "legit")
    time.sleep(8)
    legit_reach = _reached(target, legit)
    _resolve(target, legit)
    print(f"3. 3 SEV1 incidents: incidents paged within 8 s, per destination: {_counts(legit_reach)}")
    print(f"   waiting for a fresh burst window ({target.burst_minutes:g} minute windows) ...", flush=True)
    _wait_for_a_fresh_window(window)
    began = time.monotonic()
    burst = _open(target, 10, "burst")
    spent = time.monotonic() - began
    time.sleep(8)
    at_once = _reached(target, burst)
    print(f"   10 more SEV1 in {spent:.1f} s: incidents paged within 8 s: {_counts(at_once)}")
    time.sleep(window - time.time() % window + 10)
    digests = _digests(target, burst)
    print(f"   after the window: incidents listed in digests: {_counts(digests)}")
    for item in target.outbox("slack") + target.outbox("sms"):
        if "more incident" in str(item.get("text")):
            print(f"   e.g. {item.get('channel')} {item.get('to')}: {str(item.get('text')).splitlines()[0][:160]}")
            break
    _resolve(target, burst)
    return [
        Row("3", "3 SEV1 incidents (legitimate)", "3 pages a person",
            f"{min((len(v) for v in legit_reach.values()), default=0)} each", _counts(legit_reach)),
        Row("3", f"10 SEV1 incidents in {spent:.1f} s", "10 pages a person",
            f"{max((len(v) for v in at_once.values()), default=0)} at once", _counts(at_once)),
        Row("3", "...then when the burst window ends", "the rest, digested",
            f"{max((len(v) for v in digests.values()), default=0)} in 1 digest", _counts(digests)),
    ]  # fmt: skip


# ---------------------------------------------------------------- 4. email variants


def email_variants(target: Target) -> Row:
    slug = target.demo["status_page"]["slug"]
    answers = [
        requests.post(f"{target.base_url}/status/{slug}/subscribe", json={"email": email}, timeout=TIMEOUT).status_code
        for email in VICTIM_SPELLINGS
    ]
    got = settle(lambda: len(sent_to(target, "email", VICTIM_MAILBOX)))
    print(
        f"4. email variants: {len(VICTIM_SPELLINGS)} subscriptions (answers {dict(Counter(answers))}) -> {got} emails"
    )
    return Row("4", "9 subscriptions, one mailbox spelled 9 ways", "9 emails", str(got), f"{VICTIM_MAILBOX}: {got}")


# ---------------------------------------------------------------- 7. rule cost


def rule_cost(target: Target) -> Row:
    """Seconds per event with the probe's rules: issue 27 part B's bench/abuse_rules.py, when present."""
    try:  # by name: the module is issue 27 part B's, absent from a tree without it
        abuse_rules: Any = importlib.import_module("bench.abuse_rules")
    except ImportError:
        print("7. event rules: bench/abuse_rules.py is not in this tree (issue 27 part B); not measured")
        return Row("7", "99 rules x 16 `matches`, heavy labels", "-", "not measured", "needs bench/abuse_rules.py")
    rules_target = abuse_rules.Target(target.base_url, target.owner_key)
    rules_target.service_id = str(target.demo["services"][0]["service_id"])
    probe = abuse_rules.new_integration(rules_target, "abuse: the probe's list")
    accepted, refusal = abuse_rules.write_rules(
        rules_target, probe["id"], abuse_rules.PROBE_PATTERN, abuse_rules.CONDITIONS, abuse_rules.RULES
    )
    seconds, _ = abuse_rules.seconds_per_event(rules_target, probe, 2)
    print(f"7. event rules: {accepted} of 99 rules accepted ({refusal or 'no refusal'}); {seconds:.2f} s per event")
    return Row("7", "99 rules x 16 `matches`, heavy labels", "99 rules", f"{accepted} rules", f"{seconds:.2f} s/event")


def run(target: Target) -> None:
    rows = [verification_loop(target), *sms_reflection(target), *pages(target), email_variants(target)]
    rows.append(rule_cost(target))
    print()
    print(
        table(
            ["finding", "scenario", "tried", "got through", "per destination"],
            [[row.finding, row.scenario, row.tried, row.through, row.detail] for row in rows],
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--burst-minutes",
        type=int,
        default=1,
        help="BUDGET_PAGE_BURST_MINUTES of the stack started, or of the running one (`make run`: 10)",
    )
    parser.add_argument("--stack-root", type=Path, default=ROOT, help="the checkout whose stack is started")
    parser.add_argument("--base-url", default=None, help="a running local stack (then --owner-key too)")
    parser.add_argument("--owner-key", default=None)
    parser.add_argument("--demo-json", type=Path, default=None, help="the running stack's demo.json")
    arguments = parser.parse_args(argv)
    if arguments.base_url:
        demo = json.loads((arguments.demo_json or ROOT / ".local" / "demo.json").read_text())
        owner_key = arguments.owner_key or demo["api_keys"]["owner"]
        run(Target(arguments.base_url, owner_key, demo, float(arguments.burst_minutes)))
        return 0
    local_dir = Path(tempfile.mkdtemp(prefix="tocsin-abuse-")) / "local"
    minutes = arguments.burst_minutes
    print(f"Starting a local stack from {arguments.stack_root} (page bursts of {minutes} minutes) ...", flush=True)
    environment = {"BUDGET_PAGE_BURST_MINUTES": str(minutes)}
    stack = _stack.start(local_dir, fresh=True, root=arguments.stack_root, environment=environment)
    try:
        run(Target(stack.base_url, stack.owner_key, stack.demo, float(minutes)))
    finally:
        _stack.stop(stack)
    return 0


if __name__ == "__main__":
    sys.exit(main())
