"""The AWS emulator (moto in server mode) as a child process bound to loopback."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import IO

_PR_SET_PDEATHSIG = 1
# How long a stop waits for the emulator's final snapshot (seconds; a snapshot of 10,000
# incidents takes about one) before it stops the emulator without it.
STOP_SECONDS = 20.0


def die_with_parent() -> None:
    """Ask Linux to SIGTERM this process when its parent dies, so nothing is orphaned."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Emulator:
    def __init__(self, port: int = 0, state_dir: Path | None = None) -> None:
        # Port 0: bind a free port now and hand the listening socket to the child, so no other
        # process can take the port between choosing and serving (stacks run side by side in tests).
        self.listener: socket.socket | None = None
        if not port:
            self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.listener.bind(("127.0.0.1", 0))
            self.listener.listen(128)
            port = int(self.listener.getsockname()[1])
        self.port = port
        self.process: subprocess.Popen[bytes] | None = None
        # With a directory, the emulator keeps its data there across restarts (persistence.py)
        # and logs what it restored (and why it could not) to emulator.log beside it.
        self.state_dir = state_dir

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path | None:
        return self.state_dir / "emulator.log" if self.state_dir is not None else None

    def start(self, timeout: float = 120.0) -> None:
        """Returns once the emulator answers; a restart first restores its data (seconds for 10,000 incidents)."""
        command = [sys.executable, "-m", "chalicelib.local.moto_server", "--port", str(self.port)]
        inherited: tuple[int, ...] = ()
        if self.listener is not None:
            inherited = (self.listener.fileno(),)
            command += ["--fd", str(self.listener.fileno())]
        log: IO[bytes] | None = None
        if self.state_dir is not None and self.log_path is not None:
            command += ["--state-dir", str(self.state_dir)]
            self.state_dir.mkdir(parents=True, exist_ok=True)
            log = self.log_path.open("ab")
        try:
            self.process = subprocess.Popen(
                command,
                stdout=log or subprocess.DEVNULL,
                stderr=log or subprocess.DEVNULL,
                preexec_fn=die_with_parent,
                pass_fds=inherited,
                # Its own session: Ctrl-C reaches only us, and we stop it last, after the API and
                # the workers, so its final snapshot holds their last writes.
                start_new_session=True,
            )
        finally:
            if log is not None:
                log.close()
        if self.listener is not None:
            self.listener.close()  # the child has its own copy
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the AWS emulator exited at start (is port {self.port} taken?){self._log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.endpoint_url}/moto-api/", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the AWS emulator did not start in time{self._log_tail()}")

    def _log_tail(self) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        lines = self.log_path.read_text(errors="replace").strip().splitlines()[-3:]
        return "\n" + "\n".join(lines) if lines else ""

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()  # it writes a last snapshot, then exits
        try:
            self.process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            # Stuck (a final snapshot waiting on a background one that does not finish): stopping
            # beats saving. DynamoDB writes are in the journal already; only SQS and SES changes
            # since the last snapshot are lost.
            print(
                f"the AWS emulator did not stop in {STOP_SECONDS:.0f}s; stopped it without a final snapshot",
                file=sys.stderr,
                flush=True,
            )
            self.process.kill()
            self.process.wait(timeout=5)


def point_environment_at(endpoint_url: str) -> None:
    """boto3 and PynamoDB both honour AWS_ENDPOINT_URL; credentials can be anything."""
    os.environ["AWS_ENDPOINT_URL"] = endpoint_url
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
