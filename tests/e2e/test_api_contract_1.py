"""The contract sweep (tests/e2e/contract.py), part 1 of 2: the operations in group 0."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("schemathesis")

from tests.e2e import contract
from tests.e2e.conftest import LocalStack

pytestmark = contract.TIMEOUT
PART = 0


@pytest.fixture(scope="module")
def contract_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    yield from contract.contract_stack(tmp_path_factory)


@pytest.fixture(scope="module")
def run(contract_stack: LocalStack) -> contract.Run:
    return contract.sweep(contract_stack, PART)


def test_no_check_fails(run: contract.Run) -> None:
    contract.assert_no_check_fails(run)


def test_every_operation_was_exercised(run: contract.Run) -> None:
    contract.assert_every_operation_was_exercised(run)


def test_the_parts_cover_every_group_once() -> None:
    """With test_api_contract_2, every group of operations is swept, none twice."""
    import importlib

    parts = [importlib.import_module(f"tests.e2e.test_api_contract_{n}").PART for n in range(1, contract.PARTS + 1)]
    assert sorted(parts) == list(range(contract.PARTS))
