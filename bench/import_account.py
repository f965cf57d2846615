"""How long `tocsin import` takes to bring a real-sized account into the local stack.

    .venv/bin/python bench/import_account.py [--vendor pagerduty|opsgenie|both] [--dir DIR]

For each vendor: starts the real local stack empty (FRESH) in its own directory and a stand-in for
the vendor's REST API (tests/importers: PagerDuty over HTTPS with a throw-away CA, Opsgenie over
HTTP) holding the test account (40 users, 8 teams, 10 schedules with several layers and
restrictions, 12 escalation policies, 30 services, 40 integrations, overrides, maintenance
windows; Opsgenie also 3 heartbeats). Then runs the command as a person would (a process, the
credentials in the environment, the stack's owner key): `--plan`, `--apply`, and `--apply` again
(which must change nothing), each timed from start to exit. Prints the figures; exits 1 if a run
failed or the second apply changed something.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import _stack  # noqa: E402


def run(stack: _stack.RunningStack, vendor: str, mode: str, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    environment = {**os.environ, "TOCSIN_URL": stack.base_url, "TOCSIN_API_KEY": stack.owner_key, **env}
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "chalicelib.client", "import", vendor, mode, "--json"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.monotonic() - began
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
        raise SystemExit(f"tocsin import {vendor} {mode} exited with {done.returncode}")
    return seconds, json.loads(done.stdout)


def bench(vendor: str, directory: Path) -> bool:
    from tests.importers import opsgenie_account, pagerduty_account, tls
    from tests.importers.standin_opsgenie import OpsgenieStandIn
    from tests.importers.standin_pagerduty import PagerDutyStandIn

    now = datetime.now(UTC)
    server: Any
    if vendor == "pagerduty":
        certificates = tls.make(directory / "tls")
        server = PagerDutyStandIn(pagerduty_account.account(now), certificates, "bench-token").start()
        env = {
            "PAGERDUTY_API_TOKEN": "bench-token",
            "PAGERDUTY_API_URL": server.base_url,
            "SSL_CERT_FILE": str(certificates.ca_path),
        }
    else:
        server = OpsgenieStandIn(opsgenie_account.account(now), "bench-key").start()
        env = {"OPSGENIE_API_KEY": "bench-key", "OPSGENIE_API_URL": server.base_url}
    stack = _stack.start(directory / "stack", fresh=True)
    try:
        plan_seconds, planned = run(stack, vendor, "--plan", env)
        apply_seconds, applied = run(stack, vendor, "--apply", env)
        again_seconds, again = run(stack, vendor, "--apply", env)
    finally:
        _stack.stop(stack)
        server.stop()
    read = ", ".join(f"{count} {name}" for name, count in planned["read"].items())
    print(f"{vendor}: read {read}")
    print(f"  vendor requests:   {len(server.seen)} over the three runs")
    print(
        f"  --plan:            {plan_seconds:6.1f} s  ({planned['summary']['create']} to create, "
        f"{planned['summary']['skipped']} not imported, {planned['summary']['approximated']} approximated)"
    )
    print(
        f"  --apply:           {apply_seconds:6.1f} s  ({applied['applied']['created']} created, "
        f"{len(applied['cutover']['senders'])} senders on the cut-over sheet)"
    )
    print(
        f"  --apply again:     {again_seconds:6.1f} s  ({again['applied']['created']} created, "
        f"{again['applied']['updated']} updated)"
    )
    return not again["changes_pending"] and again["applied"] == {"created": 0, "updated": 0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--vendor", choices=("pagerduty", "opsgenie", "both"), default="both")
    parser.add_argument("--dir", type=Path, help="where the stacks live (default: a temporary directory)")
    args = parser.parse_args()
    vendors = ("pagerduty", "opsgenie") if args.vendor == "both" else (args.vendor,)
    with tempfile.TemporaryDirectory(prefix="tocsin-import-bench-") as scratch:
        base = args.dir or Path(scratch)
        results = [bench(vendor, base / vendor) for vendor in vendors]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
