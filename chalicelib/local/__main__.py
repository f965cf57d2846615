"""`make run`: the whole stack on one machine. Ctrl-C or SIGTERM stops every part of it.

Order: emulator (child process, dies with us; restores $LOCAL_DIR/data) -> tables and queues ->
demo data -> HTTP API on 127.0.0.1:$PORT -> SQS workers -> banner -> demo.json (ready) -> wait for a signal.
The data survives Ctrl-C, kill -9 and restarts (chalicelib/local/persistence.py); FRESH=1 starts
empty.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType

from chalicelib.local.emulator import Emulator, die_with_parent, point_environment_at
from chalicelib.local.persistence import SNAPSHOT_NAME, SNAPSHOT_SECONDS

LOCAL_DEFAULTS = {
    "TOCSIN_STAGE": "local",
    "TABLE_PREFIX": "tocsin-local-",
    "QUEUE_PREFIX": "tocsin-local-",
    "JWT_SECRET": "local-insecure-jwt-secret-0123456789abcdef",
    # The local server speaks plain HTTP; API Gateway would have required HTTPS.
    "LOCAL_ALLOW_HTTP_WEBHOOKS": "true",
}


def main() -> int:
    die_with_parent()
    # PORT=0: the system picks a free port, held from the start (tests run stacks side by side).
    port = int(os.environ.get("PORT", "8000"))
    local_dir = Path(os.environ.get("LOCAL_DIR", ".local"))
    for name, value in LOCAL_DEFAULTS.items():
        os.environ.setdefault(name, value)
    data_dir = local_dir / "data"
    if os.environ.get("FRESH", "").lower() in ("1", "true", "yes"):
        shutil.rmtree(data_dir, ignore_errors=True)
    restoring = (data_dir / SNAPSHOT_NAME).exists() or any(data_dir.glob("journal-*.jsonl"))
    demo_path = local_dir / "demo.json"
    demo_path.unlink(missing_ok=True)  # written again once this run is ready: demo.json means ready

    stop = threading.Event()
    # The handler only flips a flag: Event.set takes a lock, and a second signal arriving while
    # the first handler held it (Ctrl-C reaches make and Python; `kill` of the process group
    # and make's own forwarding) deadlocked the main thread. The main thread sets `stop`.
    stop_requested: list[int] = []

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop_requested.append(signum)

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)

    started = time.monotonic()
    emulator = Emulator(int(os.environ.get("MOTO_PORT", "0")), state_dir=data_dir)
    try:
        emulator.start()
    except RuntimeError as error:
        print(f"Could not start the AWS emulator: {error}", file=sys.stderr)
        return 1
    point_environment_at(emulator.endpoint_url)
    # SNS signing certificates live in the emulator (under their sns.<region>.amazonaws.com URL).
    os.environ["LOCAL_SNS_CERTIFICATE_ENDPOINT"] = emulator.endpoint_url
    server = None
    try:
        # Imported only now, so every client and table binding sees the emulator.
        from app import app
        from chalicelib import clock
        from chalicelib.local import demo, outbox_recording
        from chalicelib.local.provision import SMS_INBOUND_PATH, create_sms_inbound_topic, provision
        from chalicelib.local.server import start_server
        from chalicelib.local.worker_loop import start_workers
        from chalicelib.settings import reset_settings

        # What SES and SNS accept is kept in the outbox table as it is sent (outbox_recording.py).
        outbox_recording.install()
        # Listening first: the port is known (and ours) before the demo data names URLs on it.
        # Requests before demo.json exists may find empty tables; demo.json means ready.
        server, _ = start_server(app, "127.0.0.1", port)
        base_url = f"http://127.0.0.1:{server.server.server_address[1]}"
        os.environ["PUBLIC_BASE_URL"] = base_url
        # Replies to SMS pages arrive on this topic (docs/: README "Acting from the page").
        sms_inbound_topic_arn = create_sms_inbound_topic(base_url)
        os.environ["SMS_INBOUND_TOPIC_ARN"] = sms_inbound_topic_arn
        reset_settings()
        provision()
        _configure_console_sign_in()
        facts = demo.seed(clock.now())
        workers = start_workers(app, stop)
        # The banner first, demo.json last: demo.json means ready, and whoever waits for it (the
        # e2e tests, scripts) then finds the whole banner in the log too. Written the other way
        # round, a reader could see demo.json and read the log before the banner was printed.
        _banner(
            base_url,
            emulator.endpoint_url,
            facts,
            demo_path,
            time.monotonic() - started,
            len(workers),
            _data_lines(data_dir, restoring),
        )
        demo.write_demo_file(
            demo_path,
            {
                "base_url": base_url,
                "aws_endpoint_url": emulator.endpoint_url,
                **facts,
                "sms_inbound": {"topic_arn": sms_inbound_topic_arn, "url": base_url + SMS_INBOUND_PATH},
            },
        )
        while not stop_requested:
            time.sleep(0.2)
        print("\nStopping Tocsin...", flush=True)
    except OSError as error:
        print(f"Could not start: {error} (is port {port} in use? set PORT=...)", file=sys.stderr)
        return 1
    finally:
        stop.set()
        if server is not None:
            server.server.shutdown()
            server.server.server_close()
        emulator.stop()
    return 0


def _configure_console_sign_in() -> None:
    """The console's Cognito pool on the emulator (made again each run: the emulator keeps only
    DynamoDB, SQS and SES data across restarts; the demo users are created again with it)."""
    from chalicelib.identity.pool import create_pool
    from chalicelib.local.cognito_mail import send_invitations_by_email, send_reset_codes_by_email
    from chalicelib.settings import reset_settings

    pool_id, client_id = create_pool()
    os.environ["COGNITO_USER_POOL_ID"] = pool_id
    os.environ["COGNITO_CLIENT_ID"] = client_id
    reset_settings()
    send_reset_codes_by_email()
    send_invitations_by_email()


def _banner(
    base_url: str,
    aws_url: str,
    facts: dict[str, object],
    demo_path: Path,
    seconds: float,
    worker_count: int,
    data_lines: list[str],
) -> None:
    keys = facts["api_keys"]
    owner = keys["owner"] if isinstance(keys, dict) else "?"
    console = facts.get("console")
    console_users = console.get("users", []) if isinstance(console, dict) else []
    sign_in = next((u for u in console_users if u.get("role") == "owner"), None)
    console_line = (
        f"  Console      {console['url']}   (sign in as {sign_in['email']} / {sign_in['password']})"
        if isinstance(console, dict) and sign_in
        else "  Console      not configured"
    )
    print(
        "\n".join(
            [
                "",
                f"  Tocsin is running (started in {seconds:.1f}s)",
                f"  API          {base_url}/api/v1   (OpenAPI: {base_url}/api/v1/openapi.json)",
                f"  Owner key    {owner}",
                f"  Demo data    {demo_path.resolve()}",
                console_line,
                f"  Outbox       {base_url}/local/outbox   (emails, SMS, calls, Slack messages, webhook deliveries)",
                f"  AWS emulator {aws_url}   workers: {worker_count}",
                *data_lines,
                "",
                f"  Try: curl -s -H 'Authorization: Bearer {owner}' {base_url}/api/v1/auth/verify",
                "  Stop with Ctrl-C.",
                "",
            ]
        ),
        flush=True,
    )


def _data_lines(data_dir: Path, restored: bool) -> list[str]:
    state = "restored from the last run" if restored else "new"
    return [
        f"  Data         {data_dir.resolve()}/   ({state})",
        "               kept across Ctrl-C, kill -9 and restarts (DynamoDB writes journalled as they",
        f"               happen, a snapshot every {SNAPSHOT_SECONDS:.0f}s). Start empty: make run FRESH=1",
    ]


if __name__ == "__main__":
    code = main()
    # Everything is stopped and the emulator has saved its state: skip interpreter finalization,
    # which can wait on a worker thread still inside a request to the stopped emulator (a boto3
    # retry, a webhook delivery timeout) and hold up Ctrl-C, as the emulator's own stop does.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
