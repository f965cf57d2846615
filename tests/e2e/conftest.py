"""Start the real local stack (`make run`'s entry point) in a subprocess and talk HTTP to it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class LocalStack:
    process: subprocess.Popen[bytes]
    demo: dict[str, Any]
    log_path: Path
    session: requests.Session = field(default_factory=requests.Session)

    @property
    def base_url(self) -> str:
        return str(self.demo["base_url"])

    def headers(self, key: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key or self.demo['api_keys']['owner']}"}

    def get(self, path: str, key: str | None = None, **kwargs: Any) -> requests.Response:
        return self.session.get(self.base_url + path, headers=kwargs.pop("headers", self.headers(key)), **kwargs)

    def post(self, path: str, key: str | None = None, **kwargs: Any) -> requests.Response:
        return self.session.post(self.base_url + path, headers=kwargs.pop("headers", self.headers(key)), **kwargs)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def start_stack(tmp_path: Path, **environment: str) -> LocalStack:
    local_dir = tmp_path / "local"
    log_path = tmp_path / "stack.log"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TABLE_", "QUEUE_", "TOCSIN_", "RATE_"))},
        "PORT": "0",  # the stack binds a free port itself and names it in demo.json
        "MOTO_PORT": "0",
        "LOCAL_DIR": str(local_dir),
        "PYTHONUNBUFFERED": "1",
        **environment,
    }
    demo_path = local_dir / "demo.json"
    demo_path.unlink(missing_ok=True)  # a restart on the same directory: wait for this run's file
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "chalicelib.local"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    # A guard against a stack that never comes up, not a speed check: ~4 s on an idle 2-CPU machine,
    # over 45 s on one shared by several suites (a start closer to 90 s failed runs there).
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"local stack exited with {process.returncode}:\n{log_path.read_text()}")
        if demo_path.exists():
            demo = json.loads(demo_path.read_text())
            return LocalStack(process, demo, log_path)
        time.sleep(0.2)
    process.kill()
    raise AssertionError(f"local stack did not write demo.json in time:\n{log_path.read_text()}")


def stop_stack(stack: LocalStack) -> int:
    stack.process.send_signal(signal.SIGTERM)
    try:
        return stack.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        stack.process.kill()
        raise


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    running = start_stack(tmp_path_factory.mktemp("stack"))
    yield running
    stop_stack(running)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)
