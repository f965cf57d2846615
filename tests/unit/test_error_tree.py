"""One error vocabulary, free of the web framework.

- No module of chalicelib outside the HTTP layer (chalicelib/api), the local stack
  (chalicelib/local) and the deploy tooling (chalicelib/deploy) imports chalice: domain code
  raises chalicelib.errors, and only the API layer knows how an error becomes a response.
- chalicelib/errors.py defines every error code the code and the tests use, each code in one
  class only.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from chalicelib import errors
from chalicelib.deploy.source_trees import parsed
from chalicelib.errors import AppError
from chalicelib.integration import gate, normalized

ROOT = Path(__file__).resolve().parents[2]
CHALICELIB = ROOT / "chalicelib"
# The packages that may depend on Chalice (app.py, at the root, wires it too).
MAY_IMPORT_CHALICE = ("api", "console", "local", "deploy")
CODE_PATTERN = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")


def _modules(root: Path) -> Iterator[Path]:
    yield from sorted(path for path in root.rglob("*.py") if ".venv" not in path.parts)


def _is_chalice(module: str) -> bool:
    return module == "chalice" or module.startswith("chalice.")


def _imports_chalice(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Import) and any(_is_chalice(alias.name) for alias in node.names)) or (
            isinstance(node, ast.ImportFrom) and node.level == 0 and _is_chalice(node.module or "")
        ):
            lines.append(node.lineno)
    return lines


def test_only_the_http_layer_imports_chalice() -> None:
    offenders = []
    for path in _modules(CHALICELIB):
        relative = path.relative_to(CHALICELIB)
        if relative.parts[0] in MAY_IMPORT_CHALICE:
            continue
        lines = _imports_chalice(parsed(path))
        offenders += [f"chalicelib/{relative.as_posix()}:{line}" for line in lines]
    assert offenders == [], "chalice imported outside chalicelib/api, console, local, deploy: " + ", ".join(offenders)


def test_the_check_sees_every_form_of_import() -> None:
    for source in (
        "import chalice",
        "import chalice.app as a",
        "from chalice.app import Response",
        "from chalice import Chalice",
    ):
        assert _imports_chalice(ast.parse(source)) == [1], source
    for source in ("import chalicelib", "from chalicelib.errors import AppError", "from .chalice import x"):
        assert _imports_chalice(ast.parse(source)) == [], source


def _error_classes() -> list[type[AppError]]:
    found: list[type[AppError]] = []
    pending: list[type[AppError]] = [AppError]
    while pending:
        kind = pending.pop()
        found.append(kind)
        pending.extend(kind.__subclasses__())
    return found


def _defined_codes() -> Counter[str]:
    # A class that does not set `code` itself is a kind of its parent (ConfigurationError is an
    # INTERNAL_ERROR, DeliveryRejected groups the parser errors), not a second definition.
    return Counter(
        kind.code
        for kind in _error_classes()
        if kind.__module__ == errors.__name__ and "code" in vars(kind) and kind is not AppError
    )


def _mentions_code(node: ast.expr) -> bool:
    """`x.code`, `x["code"]`, `error_code(x)`, or a tuple holding one of them."""
    if isinstance(node, ast.Attribute):
        return node.attr == "code"
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "code"
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        return "code" in name
    if isinstance(node, ast.Tuple | ast.List):
        return any(_mentions_code(item) for item in node.elts)
    return False


def _code_constants(node: ast.AST) -> set[str]:
    return {
        child.value
        for child in ast.walk(node)
        if isinstance(child, ast.Constant) and isinstance(child.value, str) and CODE_PATTERN.match(child.value)
    }


def _used_codes(tree: ast.AST) -> set[str]:
    """Codes compared with an error's code (`error.code == "X"`, `body["error"]["code"] in ("X",)`)
    or passed to an error assertion helper (`assert_error_envelope(document, "X")`)."""
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_mentions_code(side) for side in sides):
                for side in sides:
                    if not _mentions_code(side):
                        used |= _code_constants(side)
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name.startswith("assert_error"):
                for argument in node.args:
                    used |= _code_constants(argument)
    return used


def test_each_error_code_is_defined_once() -> None:
    twice = sorted(code for code, count in _defined_codes().items() if count > 1)
    assert twice == [], f"codes defined by more than one class: {twice}"


def test_errors_define_every_code_in_use() -> None:
    used: dict[str, str] = {}
    for root in (CHALICELIB, ROOT / "tests", ROOT / "bench", ROOT / "scripts"):
        for path in _modules(root):
            for code in _used_codes(parsed(path)):
                used.setdefault(code, path.relative_to(ROOT).as_posix())
    defined = set(_defined_codes())
    assert {"ROUTE_NOT_FOUND", "INVALID_PAYLOAD", "NOT_FOUND"} <= set(used), "the scan found nothing"
    missing = {code: where for code, where in used.items() if code not in defined}
    assert missing == {}, f"codes used but not defined in chalicelib/errors.py: {missing}"


def test_every_error_has_a_status_and_a_message() -> None:
    for kind in _error_classes():
        assert 400 <= kind.status <= 599, kind
        assert kind.default_message, kind
        assert kind().message == kind.default_message, kind


def test_webhook_codes_are_errors_of_the_tree() -> None:
    statuses = {kind.code: kind.status for kind in errors.WEBHOOK_ERROR_TYPES}
    assert statuses == {
        "ROUTE_NOT_FOUND": 404,
        "WEBHOOK_REVOKED": 410,
        "INVALID_PAYLOAD": 400,
        "INVALID_SIGNATURE": 401,
        "SIGNATURE_EXPIRED": 401,
        "IP_NOT_ALLOWED": 403,
        "HTTPS_REQUIRED": 403,
    }
    assert (errors.PayloadTooLarge.status, errors.RateLimited.status) == (413, 429)
    # The status tables of the old vocabularies are gone: the classes carry their status.
    assert not hasattr(normalized, "REJECTION_STATUS") and not hasattr(normalized, "WebhookRejected")
    assert not hasattr(gate, "STATUS_OF") and not hasattr(gate, "WebhookError")


def test_an_errors_headers_are_read_only_and_more_headers_make_a_copy() -> None:
    import pytest

    given = {"Retry-After": "7"}
    original = errors.ServiceUnavailable("busy", headers={"X-RateLimit-Limit": "10"})
    given_error = errors.RateLimited(headers=given)
    given["Retry-After"] = "99"  # the caller's dict is copied, not kept
    assert given_error.headers == {"Retry-After": "7"}
    with pytest.raises(TypeError):
        original.headers["X-RateLimit-Limit"] = "0"  # type: ignore[index]
    with pytest.raises(AttributeError):
        original.headers = {}  # type: ignore[misc]
    more = original.with_headers({"X-RateLimit-Remaining": "3", "Retry-After": "60"})
    assert type(more) is errors.ServiceUnavailable and (more.code, more.message) == ("SERVICE_UNAVAILABLE", "busy")
    # The error's own headers win (its Retry-After says when this very error clears).
    assert more.headers == {"X-RateLimit-Limit": "10", "Retry-After": "2", "X-RateLimit-Remaining": "3"}
    assert original.headers == {"X-RateLimit-Limit": "10", "Retry-After": "2"}
    rejected = errors.InvalidPayload.from_problems(["a", "b"]).with_headers({"X-A": "1"})
    assert (rejected.details, rejected.retryable, str(rejected)) == (["a", "b"], False, "a; b")
