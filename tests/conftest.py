"""Shared fixtures: an in-process moto account with every table and queue, and a demo organization."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

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

from chalicelib import aws, clock
from chalicelib.apikey import service as apikeys
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.settings import reset_settings

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


def reconfigure(**environment: str) -> None:
    """Change settings for one test; the `aws_env` fixture restores them."""
    os.environ.update(environment)
    reset_settings()
    aws.reset()
    apikeys.clear_cache()


def _serialize_in_process_dynamodb() -> None:
    """In-process moto breaks under concurrent transactions (see chalicelib/local/moto_server.py);
    serialize DynamoDB requests as the local emulator does, so race tests test our code."""
    import threading

    from moto.core.botocore_stubber import BotocoreStubber

    if getattr(BotocoreStubber, "_tocsin_serialized", False):
        return
    original = BotocoreStubber.__call__
    lock = threading.Lock()

    def call(self: BotocoreStubber, event_name: str, request: object, **kwargs: object) -> object:
        if ".dynamodb." in event_name or event_name.endswith(".dynamodb"):
            with lock:
                return original(self, event_name, request, **kwargs)  # type: ignore[arg-type]
        return original(self, event_name, request, **kwargs)  # type: ignore[arg-type]

    BotocoreStubber.__call__ = call  # type: ignore[method-assign,assignment]
    BotocoreStubber._tocsin_serialized = True  # type: ignore[attr-defined]
    # The same item-level transaction backups the local emulator uses (so tests exercise them).
    from chalicelib.local.moto_server import cheaper_transactions

    cheaper_transactions()


@pytest.fixture
def aws_env() -> Iterator[None]:
    from moto import mock_aws

    from chalicelib.incident import settings as incident_settings
    from chalicelib.local.provision import provision

    _serialize_in_process_dynamodb()
    incident_settings.forget()
    saved = dict(os.environ)
    reset_settings()
    aws.reset()
    apikeys.clear_cache()
    with mock_aws():
        provision()
        yield
    os.environ.clear()
    os.environ.update(saved)
    reset_settings()
    aws.reset()
    apikeys.clear_cache()
    clock.freeze(None)


@dataclass
class Org:
    organization_id: str
    name: str
    owner_key: str
    readonly_key: str


def make_org(name: str = "Acme") -> Org:
    from chalicelib.organization.service import create_organization

    organization = create_organization(name=name, now=NOW)
    _, owner = apikeys.create_api_key(
        organization_id=organization.organization_id,
        name="owner",
        kind="service_account",
        scopes=list(ALL_SCOPES),
        now=NOW,
    )
    _, readonly = apikeys.create_api_key(
        organization_id=organization.organization_id,
        name="readonly",
        kind="service_account",
        scopes=["incidents:read"],
        now=NOW,
    )
    return Org(organization.organization_id, organization.name, owner, readonly)


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


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """For pytest-xdist's `--dist loadgroup` (make test): a file's tests stay on one worker, so its
    module fixtures (a packaged template, a CloudFormation stack) are built once; every test that
    starts a local stack shares one worker, so those stacks and their peers never compete."""
    for item in items:
        path = str(item.fspath)
        group = "e2e" if "/tests/e2e/" in path else path
        item.add_marker(pytest.mark.xdist_group(group))
