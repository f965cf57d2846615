"""GET /local/outbox latency on the real local stack as the messages sent grow to 10,000 (issue 25).

    .venv/bin/python bench/outbox.py [--messages 10000] [--rounds 40] [--threads 4] [--before-rounds 3] [--dir DIR]

Starts the real local stack empty (FRESH) in its own directory, points this process's chalicelib
at its emulator (as the local stage does, with the outbox recording installed as `make run`
installs it) and sends messages through the production channel classes, spread over 199
incidents: page emails (SesEmailChannel: SES SendEmail), subscriber notices (SES SendRawEmail
with List-Unsubscribe), SMS (SnsSmsChannel: SNS Publish), Slack messages (SlackChannel, to the
stack's Slack sink over HTTP), calls (TwilioVoiceChannel, to the stack's Twilio sink) and outbound
webhook deliveries (POSTed to the stack's webhook sink). At 1,000 messages and at the end it
times GET /local/outbox over HTTP: per channel, with an incident_number filter, with `to`, and
all channels at once (p50/p95 of --rounds requests), and the emulator process's resident memory.

"Before" is the path the outbox took until now for emails and SMS, replayed here at the same size:
the emulator's whole state dump (`/moto-api/data.json`) read and parsed, every SES message made
an outbox item, then filtered (--before-rounds: it is slow; the dump now holds the outbox table
too, which the old path did not have). Slack, calls and webhooks were read from
a table before too (a Query of up to 500, filtered after).

Only 127.0.0.1 is contacted; the stack is stopped at the end. Prints figures, always exits 0.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import _stack  # noqa: E402
from chalicelib.settings import get_settings  # noqa: E402

INCIDENTS = 199  # coprime with the mix of 20: every incident gets every kind of message
# Of every 20 messages: 5 page emails, 2 notices (raw), 5 SMS, 4 Slack, 2 calls, 2 webhooks.
MIX = ["email"] * 5 + ["raw_email"] * 2 + ["sms"] * 5 + ["slack"] * 4 + ["voice"] * 2 + ["webhook"] * 2
START = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def percentile(values: list[float], fraction: float) -> float:
    """Nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(-(-fraction * len(ordered) // 1)) - 1))]


def incident(n: int) -> str:
    return f"INC-2026-{n % INCIDENTS + 1:04d}"


class Sender:
    """Sends message n of the mix through the production channel classes, from this process."""

    def __init__(self, base_url: str) -> None:
        from chalicelib.notification.email_ses import SesEmailChannel
        from chalicelib.notification.slack import SlackChannel
        from chalicelib.notification.sms import SnsSmsChannel
        from chalicelib.notification.voice import TwilioVoiceChannel

        self.base_url = base_url
        self.channels: dict[str, Any] = {
            "email": SesEmailChannel(settings=get_settings()),
            "sms": SnsSmsChannel(settings=get_settings()),
            "slack": SlackChannel(settings=get_settings()),
            "voice": TwilioVoiceChannel(settings=get_settings()),
        }

    def send(self, n: int) -> bool:
        kind = MIX[n % len(MIX)]
        if kind == "raw_email":
            return self._notice(n)
        if kind == "webhook":
            return self._webhook(n)
        from chalicelib.notification.channels import Notification, Recipient

        notification = Notification(
            incident_number=incident(n),
            title=f"Checkout error rate {n}",
            severity="SEV1",
            urgency="high",
            message="Join the bridge",
            url=f"{self.base_url}/app/incidents/{incident(n)}",
            at=START + timedelta(seconds=n),
            service_name="Checkout",
        )
        person = n % 50
        recipient = Recipient(
            user_id=f"usr_{person}",
            name=f"Person {person}",
            email=f"person{person}@example.com",
            slack_user_id=f"U{person:04d}",
            phone=f"+1555555{person:04d}",
        )
        return bool(self.channels[kind].send(notification, recipient).sent)

    def _notice(self, n: int) -> bool:
        from chalicelib.subscriber import notice_email
        from chalicelib.subscriber.notice_content import read_notice

        payload = {
            "status_page": {"page_id": "p", "name": "Acme Cloud", "slug": "acme", "url": self.base_url},
            "incident": {
                "incident_id": f"spi_{n}",
                "title": f"Slow checkout {incident(n)}",
                "status": "investigating",
                "impact": "minor",
                "affected_components": [],
                "updates": [{"status": "investigating", "body": "Looking", "published_at": START.isoformat()}],
            },
            "change": "created",
        }
        notice = read_notice(kind="incident", message_id=f"m{n}", occurred_at=START.isoformat(), payload=payload)
        outcome = notice_email.send_notice(
            notice,
            # One reader per notice: the outbound budget (docs/SECURITY.md) refuses a mailbox more than a
            # few notices an hour, and this measures the outbox, not the budget.
            to=f"reader{n}@example.com",
            unsubscribe_url=f"{self.base_url}/status/acme/unsubscribe",
            settings=get_settings(),
        )
        return outcome.result == "sent"

    def _webhook(self, n: int) -> bool:
        body = json.dumps({"id": f"evt_{n}", "type": "incident.triggered", "data": {"incident_number": incident(n)}})
        request = urllib.request.Request(
            f"{self.base_url}/local/webhook-sink/bench",
            data=body.encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return bool(answer.status == 204)


def send_range(sender: Sender, first: int, last: int, threads: int) -> tuple[int, float]:
    started = time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        sent = sum(pool.map(sender.send, range(first, last)))
    return sent, time.monotonic() - started


def timed(call: Callable[[], Any], rounds: int) -> tuple[float, float, Any]:
    """(p50 ms, p95 ms, the last answer)."""
    seconds: list[float] = []
    answer = None
    for _ in range(rounds):
        began = time.perf_counter()
        answer = call()
        seconds.append((time.perf_counter() - began) * 1000)
    return statistics.median(seconds), percentile(seconds, 0.95), answer


def outbox_get(base_url: str, **params: str) -> int:
    query = urllib.parse.urlencode(params)
    with urllib.request.urlopen(f"{base_url}/local/outbox?{query}", timeout=120) as answer:
        return int(json.loads(answer.read())["data"]["total"])


def measure_after(base_url: str, rounds: int) -> list[tuple[str, float, float, int]]:
    rows = []
    number = incident(3)  # INC-2026-0004: its first message (n = 3) is a page email to person3
    for channel in ("email", "sms", "slack", "voice", "webhook", ""):
        name = channel or "all"
        base = {"channel": channel} if channel else {}
        for label, params in (
            (f"{name}", base),
            (f"{name}, limit=500", {**base, "limit": "500"}),
            (f"{name} + incident_number", {**base, "incident_number": number}),
        ):
            p50, p95, total = timed(lambda p=params: outbox_get(base_url, **p), rounds)  # type: ignore[misc]
            rows.append((label, p50, p95, total))
    for label, params in (
        ("email + to", {"channel": "email", "to": "person3@example.com"}),
        ("all + incident_number + to", {"incident_number": number, "to": "person3@example.com"}),
    ):
        p50, p95, total = timed(lambda p=params: outbox_get(base_url, **p), rounds)  # type: ignore[misc]
        rows.append((label, p50, p95, total))
    return rows


def before_path(endpoint_url: str, channel: str, incident_number: str | None) -> int:
    """The old outbox's read of emails or SMS: the whole dump, every message converted, then filtered."""
    from chalicelib.local.outbox_email import email_item
    from chalicelib.local.outbox_item import incident_number_in
    from chalicelib.local.outbox_raw import from_raw

    with urllib.request.urlopen(f"{endpoint_url}/moto-api/data.json", timeout=300) as answer:
        data = json.loads(answer.read())
    if channel == "email":
        messages = list(data.get("ses", {}).get("Message", []))
        messages += [
            from_raw(str(r.get("id")), str(r.get("source")), str(r.get("raw_data")))
            for r in data.get("ses", {}).get("RawMessage", [])
        ]
        numbers = [email_item(message).incident_number for message in reversed(messages)]
    else:
        numbers = [incident_number_in(str(r.get("message") or "")) for r in data.get("sns", {}).get("SMS", [])]
    return len([n for n in numbers if incident_number is None or n == incident_number][:50])


def measure_before(endpoint_url: str, rounds: int) -> list[tuple[str, float, float, int]]:
    rows = []
    for channel in ("email", "sms"):
        for label, number in ((channel, None), (f"{channel} + incident_number", incident(3))):
            p50, p95, total = timed(lambda c=channel, n=number: before_path(endpoint_url, c, n), rounds)  # type: ignore[misc]
            rows.append((f"{label} (before)", p50, p95, total))
    return rows


def dump_megabytes(endpoint_url: str) -> float:
    with urllib.request.urlopen(f"{endpoint_url}/moto-api/data.json", timeout=300) as answer:
        return len(answer.read()) / 1e6


def emulator_megabytes(stack: _stack.RunningStack) -> float:
    pid = stack.emulator_pid()
    if pid is None:
        return 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1e3
    return 0.0


def print_rows(title: str, rows: list[tuple[str, float, float, int]]) -> None:
    print(f"\n{title}")
    print(f"  {'GET /local/outbox':42} {'p50 ms':>9} {'p95 ms':>9} {'items':>6}")
    for label, p50, p95, total in rows:
        print(f"  {label:42} {p50:9.1f} {p95:9.1f} {total:6d}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--before-rounds", type=int, default=3, help="rounds of the old path (slow); 0: skip it")
    parser.add_argument("--dir", type=Path, default=None, help="LOCAL_DIR for the stack (default: a temporary one)")
    arguments = parser.parse_args(argv)
    local_dir = arguments.dir or Path(tempfile.mkdtemp(prefix="tocsin-outbox-")) / "local"
    stack = _stack.start(local_dir, fresh=True)
    try:
        _stack.aws_environment(stack.demo)
        import os

        os.environ["PUBLIC_BASE_URL"] = stack.base_url  # Slack and calls go to this stack's sinks
        from chalicelib import aws
        from chalicelib.local import outbox_recording, outbox_table
        from chalicelib.settings import reset_settings

        reset_settings()
        aws.reset()
        aws.bind_tables()  # an entry point: domain code is handed bound tables (the budget's counters)
        outbox_recording.install()
        endpoint = str(stack.demo["aws_endpoint_url"])
        print(f"local dir: {local_dir}; each channel keeps its newest {outbox_table.KEEP_PER_CHANNEL:,}")
        sent_so_far = 0
        for checkpoint in sorted({min(1_000, arguments.messages), arguments.messages}):
            sent, seconds = send_range(Sender(stack.base_url), sent_so_far, checkpoint, arguments.threads)
            print(
                f"\nsent messages {sent_so_far:,}-{checkpoint - 1:,}: {sent:,} accepted in {seconds:.1f}s "
                f"({sent / seconds:.0f}/s, {arguments.threads} threads, recording included)"
            )
            sent_so_far = checkpoint
            print_rows(
                f"after, {checkpoint:,} messages sent (emulator: dump {dump_megabytes(endpoint):.1f} MB, "
                f"resident {emulator_megabytes(stack):.0f} MB)",
                measure_after(stack.base_url, arguments.rounds),
            )
            if arguments.before_rounds:
                print_rows(
                    f"before (the old path, replayed), {checkpoint:,} messages sent, {arguments.before_rounds} rounds",
                    measure_before(endpoint, arguments.before_rounds),
                )
    finally:
        print(f"\nstack stopped in {_stack.stop(stack):.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
