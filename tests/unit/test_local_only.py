"""Local-only code stays local: nothing in production imports chalicelib.local, a non-local stage's
app and OpenAPI document have no /local route, and the local server is what mounts them."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCAL_PACKAGE = "chalicelib.local"
# The admin CLI provisions the emulator on request; everything else is production code.
MAY_IMPORT_LOCAL = (ROOT / "chalicelib" / "local", ROOT / "chalicelib" / "cli.py")
LOCAL_PATHS = (
    "/local/outbox",
    "/local/slack/api/chat.postMessage",
    "/local/slack/api/chat.update",
    "/local/slack/api/chat.postEphemeral",
    "/local/webhook-sink/{sink_name}",
    "/local/voice/2010-04-01/Accounts/{account_sid}/Calls.json",
    "/local/voice/calls/{call_sid}/press",
    "/local/channel-sink/{channel}",
    "/local/channel-sink/{channel}/messages/{message_id}/press",
)


def _production_modules() -> list[Path]:
    sources = [ROOT / "app.py", *sorted((ROOT / "chalicelib").rglob("*.py"))]
    return [
        path for path in sources if not any(path == allowed or allowed in path.parents for allowed in MAY_IMPORT_LOCAL)
    ]


def _is_local(module: str) -> bool:
    return module == LOCAL_PACKAGE or module.startswith(LOCAL_PACKAGE + ".")


def _package_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts if path.name == "__init__.py" else parts[:-1]).removesuffix(".__init__")


def local_imports(source: str, package: str) -> list[int]:
    """Lines that import chalicelib.local, at any depth (function-local imports too), relative imports
    resolved against `package`, and importlib.import_module("chalicelib.local...")."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            names = [arg.value for arg in node.args[:1] if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
        if any(_is_local(name) for name in names):
            lines.append(getattr(node, "lineno", 0))  # every import or call node has one
    return sorted(lines)


def test_no_production_module_imports_the_local_stack() -> None:
    offenders = {
        str(path.relative_to(ROOT)): lines
        for path in _production_modules()
        if (lines := local_imports(path.read_text(), _package_of(path)))
    }
    assert offenders == {}, "production code must not import chalicelib.local (local imports production, never back)"


def test_the_import_check_sees_every_form_of_import() -> None:
    source = (
        "import chalicelib.local.server\n"
        "from chalicelib import local\n"
        "from chalicelib.local import routes\n"
        "def later():\n"
        "    from ..local.outbox import list_outbox\n"
        "    importlib.import_module('chalicelib.local.demo')\n"
        "from chalicelib import localisation\n"
        "from chalicelib.notification import local_time\n"
        "from . import outbox\n"
    )
    assert local_imports(source, "chalicelib.notification") == [1, 2, 3, 5, 6]
    assert local_imports("from . import outbox\n", "chalicelib.local") == [1]
    assert (
        len(_production_modules()) > 100 and ROOT / "chalicelib" / "deploy" / "definitions.py" in _production_modules()
    )


def test_a_non_local_stage_has_no_local_route_nor_document_path() -> None:
    script = (
        "import json, sys\n"
        "from app import app\n"
        "from chalicelib.api.openapi import build_document\n"
        "from chalicelib.settings import get_settings\n"
        "assert not get_settings().is_local\n"
        "document = build_document('https://tocsin.example.com')\n"
        "print(json.dumps({'routes': sorted(app.routes), 'paths': sorted(document['paths']),\n"
        "    'local_modules': sorted(m for m in sys.modules if m.startswith('chalicelib.local'))}))\n"
    )
    environment = {
        **os.environ,
        "TOCSIN_STAGE": "prod",
        "API_KEY_HMAC_SECRET": "a-production-like-secret",
        # A closed local port: whatever tries to reach AWS fails at once.
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
        "AWS_MAX_ATTEMPTS": "1",
    }
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    built = json.loads(completed.stdout.strip().splitlines()[-1])
    assert "/api/v1/incidents" in built["routes"] and "/api/v1/incidents" in built["paths"]  # really built
    assert [path for path in built["routes"] if path.startswith("/local")] == []
    assert [path for path in built["paths"] if path.startswith("/local")] == []
    assert built["local_modules"] == []  # not even imported


def test_the_local_server_mounts_the_local_routes_with_the_api_pipeline() -> None:
    from app import app
    from chalicelib.api import lazy
    from chalicelib.local import routes as local_routes
    from chalicelib.local.server import start_server

    def documented() -> set[str]:
        return {operation.path for operation in lazy.documented_operations() if operation.path.startswith("/local")}

    assert not set(LOCAL_PATHS) & set(app.routes)
    assert documented() == set()
    server, _ = start_server(app, "127.0.0.1", 0)
    try:
        assert set(LOCAL_PATHS) <= set(app.routes)
        assert documented() == set(LOCAL_PATHS)
        port = server.server.server_address[1]
        # Refused before any AWS call, in the error envelope, by the same middleware as /api/v1.
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/local/outbox?channel=pigeon", timeout=10)
            raise AssertionError("expected a 400")
        except urllib.error.HTTPError as error:
            assert error.code == 400
            assert error.headers["X-Request-Id"]
            body = json.loads(error.read())
        assert body["success"] is False and body["error"]["details"] and body["meta"]["request_id"]
    finally:
        server.server.shutdown()
        server.server.server_close()
        local_routes.unmount(app)
    assert not set(LOCAL_PATHS) & set(app.routes)
    assert documented() == set()
