"""Lazy, cached, injectable AWS clients and PynamoDB table bindings.

Nothing connects at import time. The first use reads settings (so an emulator set
up beforehand is honoured), and tests can inject clients or rebind tables.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import boto3
from botocore.config import Config as BotocoreConfig
from pynamodb.connection import Connection
from pynamodb.models import Model

from chalicelib.settings import Settings, get_settings

# Every AWS call retries throttling and transient errors (5xx, connection errors, the throttling
# codes: ProvisionedThroughputExceeded, ThrottlingException, RequestLimitExceeded, ...) with
# botocore's "standard" mode: jittered exponential backoff (base 1 s, at most 20 s) and a retry
# quota. 4 attempts: at most ~7 s of waiting, inside API Gateway's 29 s. What still fails is
# answered 503 with Retry-After (chalicelib.api.pipeline) or redelivered by SQS (workers).
RETRIES: dict[str, Any] = {"mode": "standard", "total_max_attempts": 4}

_lock = threading.Lock()
_clients: dict[str, Any] = {}
_bound = False
_models: list[type[Model]] = []
# Run on every client of a service as it is built, kept across reset(): how an entry point adds
# behaviour to the clients the code below it builds (the local stack records what SES and SNS send).
_client_setups: dict[str, list[Callable[[Any], None]]] = {}


def register_model(model: type[Model]) -> type[Model]:
    """Class decorator: the model's Meta.table_name is a short name, prefixed at bind time."""
    model.Meta.short_name = model.Meta.table_name  # type: ignore[attr-defined]
    _models.append(model)
    if _bound:
        # Imported after the first bind_tables (a lazily imported domain): bind it now too.
        _bind_model(model, get_settings())
    return model


def registered_models() -> list[type[Model]]:
    return list(_models)


def client(service_name: str) -> Any:
    cached = _clients.get(service_name)
    if cached is not None:
        return cached
    with _lock:
        if service_name not in _clients:
            settings = get_settings()
            built = boto3.session.Session().client(
                service_name,  # type: ignore[call-overload]
                region_name=settings.aws_region,
                endpoint_url=settings.aws_endpoint_url,
                config=BotocoreConfig(retries=dict(RETRIES)),  # type: ignore[arg-type]
            )
            for setup in _client_setups.get(service_name, ()):
                setup(built)
            _clients[service_name] = built
        return _clients[service_name]


def set_client(service_name: str, value: Any) -> None:
    _clients[service_name] = value


def add_client_setup(service_name: str, setup: Callable[[Any], None]) -> None:
    """Run `setup` on every `service_name` client built from now on, across reset() too. A cached
    client is dropped, so the next call builds one that has it. Adding the same setup again does nothing."""
    with _lock:
        setups = _client_setups.setdefault(service_name, [])
        if setup not in setups:
            setups.append(setup)
            _clients.pop(service_name, None)


def remove_client_setup(service_name: str, setup: Callable[[Any], None]) -> None:
    """Undo add_client_setup; a cached client that has it is dropped."""
    with _lock:
        setups = _client_setups.get(service_name, [])
        if setup in setups:
            setups.remove(setup)
            _clients.pop(service_name, None)


def bind_tables() -> None:
    """Point every registered PynamoDB model at this stage's tables (idempotent, cheap)."""
    global _bound
    if _bound:
        return
    with _lock:
        if _bound:
            return
        settings = get_settings()
        for model in _models:
            _bind_model(model, settings)
        _bound = True


def _bind_model(model: type[Model], settings: Settings) -> None:
    model.Meta.table_name = settings.table_name(model.Meta.short_name)  # type: ignore[attr-defined]
    model.Meta.region = settings.aws_region
    model.Meta.host = settings.aws_endpoint_url
    reset_model_binding(model)


def reset_model_binding(model: type[Model]) -> None:
    """Rebuild a model's cached connection (PynamoDB caches it on the class) on the shared client.

    PynamoDB would otherwise build a botocore session and client per model, 50-170 ms each
    on a cold start; every table shares one client instead.
    """
    model._connection = None
    model._get_connection().connection._client = _dynamodb_client()


def _dynamodb_client() -> Any:
    """One botocore DynamoDB client, configured as PynamoDB configures its own, with RETRIES.

    PynamoDB's own retry settings (`max_retry_attempts`, `retry_configuration`) only configure
    the client it would build itself; every model and the transaction connection use this one."""
    cached = _clients.get("dynamodb-pynamodb")
    if cached is None:
        settings = get_settings()
        cached = boto3.session.Session().client(
            "dynamodb",
            region_name=settings.aws_region,
            endpoint_url=settings.aws_endpoint_url,
            config=BotocoreConfig(
                parameter_validation=False,
                connect_timeout=15,
                read_timeout=30,
                retries=dict(RETRIES),  # type: ignore[arg-type]
                max_pool_connections=32,
            ),
        )
        _clients["dynamodb-pynamodb"] = cached
    return cached


def transaction_connection() -> Connection:
    """The Connection TransactWrite/TransactGet need; cached, sharing the one client."""
    cached = _clients.get("transaction-connection")
    if cached is None:
        settings = get_settings()
        cached = Connection(region=settings.aws_region, host=settings.aws_endpoint_url)
        cached._client = _dynamodb_client()
        _clients["transaction-connection"] = cached
    return cached


def queue_url(short_name: str) -> str:
    """Queue URL by short name; cached, so a request pays GetQueueUrl once per process."""
    key = f"queue-url:{short_name}"
    cached = _clients.get(key)
    if cached is None:
        settings = get_settings()
        cached = client("sqs").get_queue_url(QueueName=settings.queue_name(short_name))["QueueUrl"]
        _clients[key] = cached
    return str(cached)


def reset() -> None:
    """Forget clients and bindings (after the environment changed). Models that were bound are
    bound again at once, to the new settings' tables: the entry point bound them once and the
    code below it never binds."""
    global _bound
    with _lock:
        _clients.clear()
        was_bound, _bound = _bound, False
    if was_bound:
        bind_tables()
