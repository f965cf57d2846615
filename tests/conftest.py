"""Shared fixtures: an in-process moto account with every table and queue (provisioned once per
process, emptied before each test: tests/emulator.py), and a demo organization per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

# Before anything imports boto3: never reach a real AWS account from tests.
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ["AWS_ACCESS_KEY_ID"] = "testing"
os.environ["AWS_SECRET_ACCESS_KEY"] = "testing"
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
os.environ.pop("AWS_ENDPOINT_URL", None)
os.environ["TOCSIN_STAGE"] = "test"
os.environ["TABLE_PREFIX"] = "tocsin-test-"
os.environ["QUEUE_PREFIX"] = "tocsin-test-"
os.environ["API_KEY_HMAC_SECRET"] = "test-hmac-secret"
os.environ["JWT_SECRET"] = "test-jwt-secret"

from chalicelib import aws
from chalicelib.apikey import service as apikeys
from chalicelib.settings import reset_settings
from tests.emulator import (
    EMULATOR,
    Emulator,
    client_settings,
    reuse_moto_url_callbacks,
    serialize_in_process_dynamodb,
    share_botocore_data_loader,
)
from tests.kit.cognito import WORKER_POOL
from tests.kit.factories import NOW, Org
from tests.kit.factories import organization as make_org

# Test modules import these from here (the factories live in tests/kit/factories.py).
__all__ = ["NOW", "Org", "make_org", "reconfigure"]

# Property tests: "ci" replays the same examples every run (a red build is reproducible, never
# flaky); "dev" explores new ones each run. HYPOTHESIS_PROFILE picks one; CI=1 defaults to "ci".
# Both drop the per-example deadline and the too_slow health check: the suite runs on shared,
# loaded 2-CPU machines, where a property would otherwise fail for the machine's speed, not the
# code's. Each test keeps its own examples count (tests/unit/test_property_budgets.py holds this).
MACHINE_INDEPENDENT: dict[str, Any] = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
hypothesis_settings.register_profile("ci", derandomize=True, database=None, print_blob=True, **MACHINE_INDEPENDENT)
hypothesis_settings.register_profile("dev", **MACHINE_INDEPENDENT)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))

share_botocore_data_loader()


def reconfigure(**environment: str) -> None:
    """Change settings for one test; the `aws_env` fixture restores them. Clients are rebuilt only
    when what they are built from changed (tests/emulator.py `client_settings`)."""
    before = client_settings()
    os.environ.update(environment)
    reset_settings()
    if client_settings() != before:
        aws.reset()
    apikeys.clear_cache()


@pytest.fixture(scope="session")
def emulator() -> Emulator:
    """moto, provisioned once per test process (per xdist worker); see tests/emulator.py. What SES
    and SNS accept is recorded in the local outbox table, as on the local stack."""
    from chalicelib.local import outbox_recording

    serialize_in_process_dynamodb()
    reuse_moto_url_callbacks()
    outbox_recording.install()
    return EMULATOR


@pytest.fixture
def aws_env(emulator: Emulator) -> Iterator[None]:
    """The emulator with every table and queue, empty; settings, clients and caches as the environment says.

    Environment variables, settings and the clock a test changes are restored after it."""
    with emulator.running():
        yield


@pytest.fixture
def fresh_aws_env(emulator: Emulator) -> Iterator[None]:
    """As `aws_env`, on a new moto account provisioned from scratch (~0.2 s more): for a test that
    needs what only a brand-new account has."""
    with emulator.running(fresh=True):
        yield


@pytest.fixture
def org(aws_env: None) -> Org:
    return make_org()


@pytest.fixture
def client(aws_env: None) -> Iterator[object]:
    from chalice.test import Client

    from app import app

    # The `test` stage's variables match this file's, so settings read during a call agree.
    with Client(app, stage_name="test") as test_client:
        yield test_client


@pytest.fixture
def cognito_pool(aws_env: None) -> tuple[str, str]:
    """This process's pool as it was made: the four role users (in no organization yet), nobody else."""
    pool_id, client_id = WORKER_POOL.ids()
    reconfigure(COGNITO_USER_POOL_ID=pool_id, COGNITO_CLIENT_ID=client_id)
    return pool_id, client_id


@pytest.fixture
def fresh_cognito_pool(aws_env: None) -> tuple[str, str]:
    """A pool made from nothing by identity.pool.create_pool (the reset left Cognito empty)."""
    from chalicelib.identity.pool import create_pool

    pool_id, client_id = create_pool()
    reconfigure(COGNITO_USER_POOL_ID=pool_id, COGNITO_CLIENT_ID=client_id)
    return pool_id, client_id


# Longest first. With `--dist loadfile` a file is one worker's, and the workers take files in
# collection order (`--no-loadscope-reorder`): a long file collected last runs alone at the end
# while the other worker idles. The e2e files (a local stack each, the contract sweep's parts,
# Chromium) come first, longest of them first, then the directories by their cost per file.
_SLOW_FIRST = (
    "tests/e2e/test_api_contract_",
    "tests/e2e/test_local_data.py",
    "tests/e2e/test_webhooks_e2e.py",
    "tests/e2e/",
    "tests/api/test_openapi_client.py",  # one test, but it runs a client generator over the document
    "tests/infra/test_package.py",  # chalice package and cfn-lint: the longest file without a stack
    "tests/infra/test_stack.py",  # the service suite on a CloudFormation-provisioned emulator
    "tests/console/",
    "tests/api/",
    "tests/service/",
    "tests/infra/",
)


def _rank(item: pytest.Item) -> int:
    path = item.nodeid
    return next((rank for rank, prefix in enumerate(_SLOW_FIRST) if path.startswith(prefix)), len(_SLOW_FIRST))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_rank)  # stable: within a rank, files and tests keep their order
