"""A client generator no one here wrote reads the served document whole: every operation, no warning.

openapi-python-client once dropped two operations without failing: two models shared the name
DeliveryV1, so a `$ref` pointed at a schema the generator could not name. This runs the generator
(pinned in requirements-dev.txt) on the document the app serves and checks what it wrote.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chalicelib.api.lazy import documented_operations as operations

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
# No post-generation hooks: they would run ruff from PATH, which says nothing about the document.
# Nothing else: a user's client must come out whole from the document alone. (The generator knows
# JSON, bytes and text/* only: the status page's XML feeds are documented as text/xml too.)
CONFIG = "post_hooks: []\n"


def snake_case(operation_id: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation_id).lower()


@pytest.mark.skipif(not GENERATOR.exists(), reason="openapi-python-client is installed by requirements-dev.txt")
def test_the_generated_client_has_every_operation_and_no_warning(document: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "openapi.json").write_text(json.dumps(document))
    (tmp_path / "config.yaml").write_text(CONFIG)
    generated = subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--path",
            "openapi.json",
            "--config",
            "config.yaml",
            "--meta",
            "none",
            "--output-path",
            "client",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = generated.stdout + generated.stderr
    assert generated.returncode == 0, output
    assert "warning" not in output.lower(), output
    modules = {path.stem for path in (tmp_path / "client" / "api").rglob("*.py") if path.stem != "__init__"}
    documented = [
        operation["operationId"]
        for item in document["paths"].values()
        for method, operation in item.items()
        if method in {"get", "put", "post", "delete", "patch"}
    ]
    assert len(documented) == len(operations()) > 90
    assert sorted({snake_case(operation_id) for operation_id in documented} - modules) == []
    # The XML feeds are read as text, not dropped (their 200 is documented as text/xml too).
    for feed in ("get_public_status_history_atom", "get_public_status_history_rss"):
        (module,) = (tmp_path / "client" / "api").rglob(f"{feed}.py")
        assert "response_200 = response.text" in module.read_text()
