"""A loopback HTTP server that plays Twilio's Calls API for the voice channel's tests.

It records every request (path, headers, form) and answers per `To` number: "ok" (201 with a
call sid, the default), ("status", code, body) for an error answer, ("slow", seconds) before
answering ok, or "garbage" (201 with a body that is not a call).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class RecordedCall:
    path: str
    headers: dict[str, str]
    form: dict[str, str]


@dataclass
class FakeTwilio:
    behaviours: dict[str, Any] = field(default_factory=dict)
    requests: list[RecordedCall] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeTwilio:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode()
                form = {key: values[-1] for key, values in urllib.parse.parse_qs(raw).items()}
                headers = {key.lower(): value for key, value in self.headers.items()}
                fake.requests.append(RecordedCall(self.path, headers, form))
                behaviour = fake.behaviours.get(form.get("To"), "ok")
                if isinstance(behaviour, tuple) and behaviour[0] == "slow":
                    time.sleep(behaviour[1])
                    behaviour = "ok"
                if isinstance(behaviour, tuple) and behaviour[0] == "status":
                    self._answer(behaviour[1], behaviour[2])
                elif behaviour == "garbage":
                    self._answer(201, b"<html>proxy</html>")
                else:
                    call = {"sid": "CA" + "f" * 32, "status": "queued", "to": form.get("To")}
                    self._answer(201, json.dumps(call).encode())

            def _answer(self, status: int, payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up (timeout tests)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
