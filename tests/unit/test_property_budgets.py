"""No property test depends on the machine's speed: every @given test runs without a per-example
deadline and with the too_slow health check off (tests/conftest.py's profiles give that to tests
that set neither; a test's own @settings must not take it back)."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

TESTS = Path(__file__).resolve().parents[1]


def _modules_with_properties() -> Iterator[str]:
    for path in sorted(TESTS.rglob("*.py")):
        if "@given" in path.read_text():
            yield ".".join(path.relative_to(TESTS.parent).with_suffix("").parts)


def _property_tests() -> Iterator[tuple[str, Any]]:
    for module_name in _modules_with_properties():
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if name.startswith("test") and getattr(value, "is_hypothesis_test", False):
                yield f"{module_name}.{name}", value


def test_the_loaded_profile_is_machine_independent() -> None:
    assert hypothesis_settings.default.deadline is None
    assert HealthCheck.too_slow in hypothesis_settings.default.suppress_health_check


def test_every_property_test_is_machine_independent() -> None:
    found = dict(_property_tests())
    declared = sum(
        1
        for module_name in _modules_with_properties()
        for node in ast.walk(ast.parse((TESTS.parent / (module_name.replace(".", "/") + ".py")).read_text()))
        if isinstance(node, ast.FunctionDef)
        and node.name.startswith("test")
        and any("given" in ast.unparse(d) for d in node.decorator_list)
    )
    assert len(found) == declared > 0
    for name, test in found.items():
        applied = test._hypothesis_internal_use_settings
        assert applied.deadline is None, f"{name} has a deadline: it would fail on a slow machine"
        assert HealthCheck.too_slow in applied.suppress_health_check, f"{name} keeps the too_slow health check"
