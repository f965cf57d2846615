"""Drive headless Chromium (Debian's `chromium` package): screenshots and the rendered DOM of a page.

    python scripts/status_screenshot.py [URL] [OUT_DIR]

takes a desktop and a phone-width screenshot of the status page (default: the local stack's demo
page) into OUT_DIR (default .local/screenshots) and prints their paths. The tests import
`dump_dom` and `screenshot` from here, so the page a person looks at and the one the tests read
are produced the same way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# (name, width, height): a common desktop and a common phone (iPhone 12-15 CSS pixels).
VIEWPORTS = (("desktop", 1280, 1400), ("phone", 390, 844))
TIMEOUT_SECONDS = 60.0


class BrowserError(RuntimeError):
    pass


def find_chromium() -> str | None:
    """The Chromium binary, or None when it is not installed (`apt-get install chromium`)."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
        if found:
            return found
    return None


def _run(arguments: list[str], *, timeout: float) -> bytes:
    binary = find_chromium()
    if binary is None:
        raise BrowserError("chromium is not installed (Debian: apt-get install chromium; `make test` installs it)")
    # A throwaway profile per run: parallel runs never share a profile lock, and nothing persists.
    with tempfile.TemporaryDirectory(prefix="tocsin-chromium-") as profile:
        command = [
            binary,
            "--headless",
            "--no-sandbox",  # root in containers and CI has no usable sandbox
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-extensions",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            *arguments,
        ]
        environment = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
        try:
            finished = subprocess.run(command, capture_output=True, timeout=timeout, env=environment, check=False)
        except subprocess.TimeoutExpired as error:
            raise BrowserError(f"chromium did not finish within {timeout:.0f}s: {command}") from error
    if finished.returncode != 0:
        raise BrowserError(f"chromium exited with {finished.returncode}:\n{finished.stderr.decode(errors='replace')}")
    return finished.stdout


def dump_dom(url: str, *, timeout: float = TIMEOUT_SECONDS) -> str:
    """The DOM after Chromium loaded and rendered the page, serialized as HTML. (Switching scripts
    off with --blink-settings=scriptEnabled=false makes headless Chromium dump nothing at all.)"""
    dom = _run(["--dump-dom", url], timeout=timeout).decode("utf-8", errors="replace")
    if not dom.strip():
        raise BrowserError(f"chromium dumped an empty DOM for {url}")
    return dom


def screenshot(url: str, path: Path, *, width: int, height: int, timeout: float = TIMEOUT_SECONDS) -> Path:
    """A PNG of the page's first `height` pixels at a `width`-pixel-wide window."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    _run([f"--screenshot={path}", f"--window-size={width},{height}", url], timeout=timeout)
    if not is_png(path):
        raise BrowserError(f"chromium wrote no PNG at {path}")
    return path


def is_png(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > len(PNG_SIGNATURE) and path.read_bytes()[:8] == PNG_SIGNATURE


def check_reachable(url: str) -> None:
    """Chromium screenshots its own error page too; make sure the page itself answers first."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            response.read()
    except urllib.error.HTTPError as error:
        raise BrowserError(f"{url} answered {error.code}") from error
    except (urllib.error.URLError, OSError) as error:
        raise BrowserError(f"cannot reach {url} ({error}); is the stack running (`make run`)?") from error


def main(argv: list[str]) -> int:
    port = os.environ.get("PORT", "8000")
    url = argv[0] if argv else f"http://127.0.0.1:{port}/status/tocsin-demo"
    out_dir = Path(argv[1] if len(argv) > 1 else ".local/screenshots")
    try:
        check_reachable(url)
        for name, width, height in VIEWPORTS:
            print(screenshot(url, out_dir / f"status-{name}.png", width=width, height=height))
    except BrowserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
