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

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Ask Linux to SIGTERM this process when its parent dies, so nothing is orphaned."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Emulator:
    def __init__(self, port: int = 0) -> None:
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

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> None:
        command = [sys.executable, "-m", "chalicelib.local.moto_server", "--port", str(self.port)]
        inherited: tuple[int, ...] = ()
        if self.listener is not None:
            inherited = (self.listener.fileno(),)
            command += ["--fd", str(self.listener.fileno())]
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=die_with_parent,
            pass_fds=inherited,
        )
        if self.listener is not None:
            self.listener.close()  # the child has its own copy
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the AWS emulator exited at start (is port {self.port} taken?)")
            try:
                with urllib.request.urlopen(f"{self.endpoint_url}/moto-api/", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("the AWS emulator did not start in time")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)


def point_environment_at(endpoint_url: str) -> None:
    """boto3 and PynamoDB both honour AWS_ENDPOINT_URL; credentials can be anything."""
    os.environ["AWS_ENDPOINT_URL"] = endpoint_url
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
