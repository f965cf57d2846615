"""Start and stop the real local stack (`make run`'s entry point) for the benchmarks that need one.

Each stack runs on free ports (PORT=0, MOTO_PORT=0) with its own LOCAL_DIR, so a benchmark never
touches the `.local/` of a `make run` that may be up. Only 127.0.0.1 is ever contacted.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class RunningStack:
    process: subprocess.Popen[bytes]
    local_dir: Path
    demo: dict[str, Any]
    ready_seconds: float  # from starting the process to demo.json (API up, demo data seeded)

    @property
    def base_url(self) -> str:
        return str(self.demo["base_url"])

    @property
    def owner_key(self) -> str:
        return str(self.demo["api_keys"]["owner"])

    def emulator_pid(self) -> int | None:
        pid = self.process.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return int(children[0]) if children else None


def start(
    local_dir: Path,
    *,
    fresh: bool = False,
    timeout: float = 300.0,
    environment: dict[str, str] | None = None,
    root: Path = ROOT,
) -> RunningStack:
    """`root`: the source tree to run (another checkout, to measure a figure before a change)."""
    demo_path = local_dir / "demo.json"
    demo_path.unlink(missing_ok=True)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TABLE_", "QUEUE_", "TOCSIN_", "RATE_"))},
        "PORT": "0",
        "MOTO_PORT": "0",
        "LOCAL_DIR": str(local_dir),
        "PYTHONUNBUFFERED": "1",
        "FRESH": "1" if fresh else "",
        **(environment or {}),
    }
    local_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with (local_dir / "stack.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "chalicelib.local"], cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    deadline = started + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the local stack exited with {process.returncode}; see {local_dir / 'stack.log'}")
        if demo_path.exists():
            return RunningStack(process, local_dir, json.loads(demo_path.read_text()), time.monotonic() - started)
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"the local stack was not ready in {timeout:.0f}s; see {local_dir / 'stack.log'}")


def stop(stack: RunningStack, how: signal.Signals = signal.SIGTERM) -> float:
    """Stop it and return the seconds it took. SIGKILL kills the emulator too (no final snapshot)."""
    began = time.monotonic()
    if how == signal.SIGKILL:
        emulator = stack.emulator_pid()
        if emulator is not None:
            os.kill(emulator, signal.SIGKILL)
    stack.process.send_signal(how)
    try:
        stack.process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        stack.process.kill()
        raise
    return time.monotonic() - began


def aws_environment(demo: dict[str, Any]) -> None:
    """Point this process's chalicelib at the stack's emulator, as the local stage does."""
    for key in [k for k in os.environ if k.startswith(("AWS_", "TABLE_", "QUEUE_", "TOCSIN_"))]:
        del os.environ[key]
    os.environ.update(
        {
            "AWS_ENDPOINT_URL": str(demo["aws_endpoint_url"]),
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
            "TOCSIN_STAGE": "local",
            "TABLE_PREFIX": "tocsin-local-",
            "QUEUE_PREFIX": "tocsin-local-",
        }
    )
    from chalicelib import aws
    from chalicelib.settings import reset_settings

    reset_settings()
    aws.reset()
