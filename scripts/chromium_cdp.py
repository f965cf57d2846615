"""A headless Chromium tab driven over the DevTools protocol, for pages that need a session.

`scripts/status_screenshot.py` loads public pages from the command line; the console needs a
browser that keeps cookies, types into a form and clicks its buttons. Chromium's
`--remote-debugging-pipe` speaks the DevTools protocol as NUL-separated JSON on file
descriptors 3 (commands in) and 4 (answers and events out), so the standard library is enough:
no WebSocket client, no browser-automation package.

Typing (`Input.insertText`) and clicking (mouse events at the element's centre) go through the
browser's input pipeline as a person's would; the page itself runs no script (its CSP forbids it).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from scripts.status_screenshot import BrowserError, find_chromium

TIMEOUT_SECONDS = 30.0
FULL_PAGE_LIMIT = 6000  # px: a full-page shot of a very long page is cut here


def _above_nine(descriptor: int) -> int:
    moved = fcntl.fcntl(descriptor, fcntl.F_DUPFD, 10)
    os.close(descriptor)
    return moved


class Tab:
    """One browser with one tab. Use as a context manager: the browser is closed on exit."""

    def __init__(self, *, timeout: float = TIMEOUT_SECONDS) -> None:
        binary = find_chromium()
        if binary is None:
            raise BrowserError("chromium is not installed (Debian: apt-get install chromium; `make test` installs it)")
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="tocsin-cdp-")
        commands_read, self._commands = os.pipe()
        self._answers, answers_write = os.pipe()
        # The child's ends go above 9 first: were one of them 3 or 4 already, moving them onto
        # 3 and 4 could overwrite the other before it is moved.
        commands_read, answers_write = (_above_nine(commands_read), _above_nine(answers_write))
        flags = [
            *("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"),
            *("--disable-extensions", "--disable-dev-shm-usage", "--remote-debugging-pipe"),
            f"--user-data-dir={self._profile.name}",
        ]
        # A tiny Python trampoline puts the pipe ends on descriptors 3 and 4, where Chromium looks
        # for them, then becomes Chromium (a shell would do, but dash takes only one-digit descriptors).
        trampoline = (
            "import os, sys; read, write = int(sys.argv[1]), int(sys.argv[2]); "
            "os.dup2(read, 3); os.dup2(write, 4); os.close(read); os.close(write); "
            "os.execv(sys.argv[3], sys.argv[3:])"
        )
        environment = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", trampoline, str(commands_read), str(answers_write), binary, *flags],
            pass_fds=(commands_read, answers_write),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=environment,
        )
        os.close(commands_read)
        os.close(answers_write)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable")

    # ---------------------------------------------------------------- protocol

    def _send(self, method: str, params: dict[str, Any] | None, session: str | None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._answers], [], [], left)[0]:
                raise BrowserError(f"chromium did not answer within {self.timeout:.0f}s")
            chunk = os.read(self._answers, 1 << 16)
            if not chunk:
                raise BrowserError("chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        message: dict[str, Any] = json.loads(raw)
        return message

    def _call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        wanted = self._send(method, params, session)
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._read(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self._events.append(message)

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A command to the tab."""
        return self._call(method, params, self._session)

    def wait_for(self, event: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while True:
            for index, message in enumerate(self._events):
                if message.get("method") == event and message.get("sessionId") == self._session:
                    del self._events[: index + 1]
                    found: dict[str, Any] = message.get("params", {})
                    return found
            message = self._read(deadline)
            if "method" in message:
                self._events.append(message)

    # ---------------------------------------------------------------- what a person does

    def open(self, url: str) -> None:
        """Load a URL and wait until the page (after any redirects) has loaded."""
        self._events.clear()
        answer = self.call("Page.navigate", {"url": url})
        if answer.get("errorText"):
            raise BrowserError(f"cannot load {url}: {answer['errorText']}")
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (the test's probe, not the page's script)."""
        answer = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in answer:
            raise BrowserError(f"{expression}: {answer['exceptionDetails']}")
        return answer.get("result", {}).get("value")

    def type_into(self, label: str, text: str) -> None:
        """Focus the control the label names and type, as a keyboard would."""
        found = self.evaluate(
            "(() => { const label = [...document.querySelectorAll('label')]"
            f".find(l => l.textContent.trim() === {json.dumps(label)});"
            " const control = label && document.getElementById(label.htmlFor);"
            " if (!control) return false; control.focus(); control.select && control.select(); return true; })()"
        )
        if not found:
            raise BrowserError(f"no control labelled {label!r} on {self.url()}")
        self.call("Input.insertText", {"text": text})

    def click(self, text: str, *, tag: str = "button") -> None:
        """Click the visible element with this text (a button by default) and wait for the next page."""
        box = self.evaluate(
            f"(() => {{ const el = [...document.querySelectorAll({json.dumps(tag)})]"
            f".find(e => e.textContent.trim() === {json.dumps(text)} && e.offsetParent !== null);"
            " if (!el) return null; el.scrollIntoView({block: 'center'});"
            " const r = el.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        if not box:
            raise BrowserError(f"no visible <{tag}> {text!r} on {self.url()}")
        self._events.clear()
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1},
            )
        self.wait_for("Page.loadEventFired")

    def url(self) -> str:
        return str(self.evaluate("location.href"))

    def html(self) -> str:
        return str(self.evaluate("document.documentElement.outerHTML"))

    def resize(self, width: int, height: int) -> None:
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        )

    def overflows_horizontally(self) -> bool:
        """True when the page is wider than the window (a phone would scroll sideways)."""
        return bool(self.evaluate("document.documentElement.scrollWidth > window.innerWidth"))

    def screenshot(self, path: Path, *, width: int, height: int, full_page: bool = True) -> Path:
        """A PNG at a `width`-pixel-wide window: the whole page (up to FULL_PAGE_LIMIT) or its first screen."""
        self.resize(width, height)
        if full_page:
            content = self.call("Page.getLayoutMetrics")["cssContentSize"]
            self.resize(width, min(max(height, int(content["height"])), FULL_PAGE_LIMIT))
        shot = self.call("Page.captureScreenshot", {"format": "png"})
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        self.resize(width, height)
        return path

    # ---------------------------------------------------------------- lifetime

    def close(self) -> None:
        try:
            self._call("Browser.close")
        except (BrowserError, OSError):
            pass
        for descriptor in (self._commands, self._answers):
            try:
                os.close(descriptor)
            except OSError:
                pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self._profile.cleanup()

    def __enter__(self) -> Tab:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
