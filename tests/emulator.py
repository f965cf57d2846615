"""The in-process moto emulator of the test suite: provisioned once per test process, wiped between tests.

Provisioning every table and queue costs far more than most tests (0.6-0.9 s against a few
milliseconds), so a test process does it once. Before each test the emulator goes back to its
just-provisioned state without re-creating anything, in moto's in-memory backends:

- DynamoDB: every table's items are dropped; tables, indexes and TTL settings stay.
- SQS: every queue's messages (visible, in flight, delayed) are dropped; queues and attributes stay.
- SES (sent mail, identities): reset, and provisioning's SES step (the verified sender) re-applied.
- Any other service a test reached (SNS, STS, ...): reset. A service that provisioning itself
  filled, other than these (the CloudFormation stack of tests/infra/cfn_provision.py), stays.

Anything structural that changed (a table or queue created or deleted, or moto reset by a test's
own `mock_aws`, as tests/infra does) is noticed, and the emulator is provisioned again from
scratch. Each test still makes its own organization, and the wipe also drops globally unique
values (slugs, routing keys, anonymous rate-limit buckets) another test left behind.

The mock is started for each test and stopped after it (its data kept), so a test that does not
ask for the emulator sees no mock, as before.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from chalicelib import aws, clock
from chalicelib.apikey import service as apikeys
from chalicelib.settings import reset_settings

# The moto release this reset was written for. It reaches into moto's in-memory backends (below,
# `MOTO_INTERNALS`), which moto may rename or reshape in any release: the reset could then leave
# one test's data to the next, or fail in every test at once. A different installed moto fails one
# test (tests/service/test_emulator_reset.py) that says what to check before this is updated.
MOTO_VERSION = "5.2.5"
MOTO_INTERNALS = (
    "moto.core.base_backend.BackendDict._instances and .reset(); each backend's .reset()",
    "moto.dynamodb.models: dynamodb_backends[account][region].tables[name].items (a dict, .clear())",
    "moto.sqs.models: sqs_backends[account][region].queues[name]._messages_lock, ._messages,"
    " ._pending_messages, .deleted_messages",
    "moto.core.botocore_stubber.BotocoreStubber.__call__(self, event_name, request, **kwargs)",
    "moto.core.custom_responses_mock.reset_responses_mock, moto.core.models.responses_mock",
    "mock_aws().start(reset=False) and .stop(remove_data=False) keep the backends' data",
    "moto.core.models.MockAWS._enable_patching(self, reset) registers CallbackResponse objects with"
    " responses_mock.add and sets botocore_stubber.enabled",
)


def moto_version_problem() -> str | None:
    """None when the installed moto is the one the reset was written for; else what to check."""
    import moto

    if moto.__version__ == MOTO_VERSION:
        return None
    checks = "\n".join(f"  - {internal}" for internal in MOTO_INTERNALS)
    return (
        f"moto {moto.__version__} is installed; tests/emulator.py's reset between tests was written for "
        f"moto {MOTO_VERSION}. Check that these moto internals still exist and mean the same:\n{checks}\n"
        "then run tests/service/test_emulator_reset.py and set MOTO_VERSION in tests/emulator.py."
    )


# Services whose provisioned state is kept and whose test data is dropped item by item.
_WIPED_IN_PLACE = ("dynamodb", "sqs")
# Services reset before each test, then given provisioning's part again (see `_reapply`).
_REAPPLIED = ("ses",)


def share_botocore_data_loader() -> None:
    """Every botocore session in the test process reads service models through one loader.

    chalicelib/aws.py builds each client on a new boto3 Session (as a cold Lambda would), which
    parses the service's JSON model again: ~140 ms a client, paid again after every `aws.reset()`.
    The models never change within a test run, so tests share one parsed copy (~25 ms a client).
    """
    import botocore.session

    if getattr(botocore.session.Session, "_tocsin_shared_loader", False):
        return
    shared = botocore.session.get_session().get_component("data_loader")

    def register_shared_loader(self: botocore.session.Session) -> None:
        self._components.lazy_register_component("data_loader", lambda: shared)

    botocore.session.Session._register_data_loader = register_shared_loader  # type: ignore[method-assign]
    botocore.session.Session._tocsin_shared_loader = True  # type: ignore[attr-defined]


def serialize_in_process_dynamodb() -> None:
    """In-process moto breaks under concurrent transactions (see chalicelib/local/moto_server.py);
    serialize DynamoDB requests as the local emulator does, so race tests test our code."""
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
    # The same per-request savings the local emulator has (item-level transaction backups, partition
    # Queries, plain JSON answers, ...), so tests exercise them.
    from chalicelib.local.moto_server import cheaper_moto

    cheaper_moto()


def reuse_moto_url_callbacks() -> None:
    """Each test starts the mock (see `Emulator.running`), and each start built moto's 1,288 URL
    callbacks (7 methods x every service's URL pattern) anew: ~9 ms a test. They are the same
    objects every time (a pattern, a method and moto's one stubber), so they are built once per
    process and registered again on each start that keeps the data. A start that resets (a
    test's own `mock_aws()`, as tests/infra does) still goes through moto's own code."""
    from moto.core.models import MockAWS, botocore_stubber, responses_mock

    if getattr(MockAWS._enable_patching, "tocsin_reused", False):
        return
    original = MockAWS._enable_patching
    built: list[Any] = []

    def enable_patching(self: MockAWS, reset: bool = True) -> None:
        if reset or not built:
            original(self, reset)
            if not built:
                built.extend(responses_mock.registered())
            return
        botocore_stubber.enabled = True
        responses_mock.start()
        for response in built:
            responses_mock.add(response)

    enable_patching.tocsin_reused = True  # type: ignore[attr-defined]
    MockAWS._enable_patching = enable_patching  # type: ignore[method-assign]


def forget_process_caches() -> None:
    """The in-process caches a test may fill: settings, API keys, incident settings.
    (The clock is unfrozen only after a test: a fixture set up before this one may freeze it.)"""
    from chalicelib.incident import workflow_settings as incident_settings

    reset_settings()
    apikeys.clear_cache()
    incident_settings.forget()


def client_settings() -> tuple[object, ...]:
    """What chalicelib/aws.py builds its clients, table bindings and queue URLs from: while this is
    unchanged, a change of environment (a Slack URL, a pool id, a limit) leaves them valid."""
    from chalicelib.settings import get_settings

    settings = get_settings()
    credentials = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("AWS_")))
    return (
        settings.aws_region,
        settings.aws_endpoint_url,
        settings.table_name("t"),
        settings.queue_name("q"),
        credentials,
    )


def _environment(environ: Any) -> dict[str, str]:
    """The variables settings and clients may read (pytest's own bookkeeping left out)."""
    return {key: value for key, value in environ.items() if key != "PYTEST_CURRENT_TEST"}


def _backend_dicts() -> list[Any]:
    from moto.core.base_backend import BackendDict

    return list(BackendDict._instances)


def _region_backends(service: Any) -> Iterator[Any]:
    for account_backends in list(service.values()):
        yield from list(account_backends.values())


def _structure() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every table and every queue (account, region, name): what a wipe keeps and must find again."""
    from moto.dynamodb.models import dynamodb_backends
    from moto.sqs.models import sqs_backends

    tables = sorted(
        f"{backend.account_id}/{backend.region_name}/{name}"
        for backend in _region_backends(dynamodb_backends)
        for name in backend.tables
    )
    queues = sorted(
        f"{backend.account_id}/{backend.region_name}/{name}"
        for backend in _region_backends(sqs_backends)
        for name in backend.queues
    )
    return tuple(tables), tuple(queues)


@dataclass(frozen=True)
class Baseline:
    """What provisioning left: the tables and queues, and the services it reached."""

    structure: tuple[tuple[str, ...], tuple[str, ...]]
    services: frozenset[str]


def _is_real_client(value: object) -> bool:
    from botocore.client import BaseClient
    from pynamodb.connection import Connection

    return isinstance(value, BaseClient | Connection | str)


class Emulator:
    """One per test process: moto's backends, provisioned once, restored before each test."""

    def __init__(self) -> None:
        self.baseline: Baseline | None = None
        # aws._clients as a clean test left them; anything else there is rebuilt before the next test.
        self._clients: dict[str, object] | None = None
        # client_settings() when those clients were built.
        self._client_settings: tuple[object, ...] | None = None
        self.full_provisions = 0

    @contextlib.contextmanager
    def running(self, *, fresh: bool = False) -> Iterator[None]:
        """The mock for one test, on the emulator restored to its provisioned state (`fresh`: a new account)."""
        from moto import mock_aws
        from moto.core.custom_responses_mock import reset_responses_mock
        from moto.core.models import responses_mock

        saved_environment = dict(os.environ)
        forget_process_caches()
        if self._clients is None or not self._clients_unchanged():
            self._rebuild_clients()
        # moto adds its URL patterns to the `responses` registry on every start; without this they
        # would pile up across tests (a stop that keeps the data does not clear them).
        reset_responses_mock(responses_mock)
        mock = mock_aws()
        mock.start(reset=False)
        try:
            self.restore(fresh=fresh)
            self._clients = dict(aws._clients)
            yield
        finally:
            mock.stop(remove_data=False)
            os.environ.clear()
            os.environ.update(saved_environment)
            forget_process_caches()
            clock.freeze(None)
            # Most environment changes (reconfigure(SLACK_API_BASE_URL=...)) leave the clients as
            # they were; rebuilding them (~60 ms of CPU) only when what they are built from changed.
            if client_settings() != self._client_settings or not self._clients_still_clean():
                self._rebuild_clients()
            else:
                self._clients = dict(aws._clients)

    def restore(self, *, fresh: bool = False) -> None:
        if fresh or self.baseline is None or _structure() != self.baseline.structure:
            self.provision_from_scratch()
            return
        reapply = False
        for service in _backend_dicts():
            name = service.service_name
            if name == "dynamodb":
                for backend in _region_backends(service):
                    for table in backend.tables.values():
                        table.items.clear()
            elif name == "sqs":
                for backend in _region_backends(service):
                    for queue in backend.queues.values():
                        with queue._messages_lock:
                            queue._messages = []
                            queue._pending_messages = set()
                            queue.deleted_messages = set()
            elif name in _REAPPLIED and name in self.baseline.services:
                for backend in _region_backends(service):
                    backend.reset()
                reapply = True
            elif name not in self.baseline.services:
                for backend in _region_backends(service):
                    backend.reset()
        if reapply:
            _reapply()

    def provision_from_scratch(self) -> None:
        """What the old per-test fixture did: a new account, then every table and queue."""
        from moto.core.base_backend import BackendDict

        import chalicelib.local.provision as provision_module

        BackendDict.reset()
        self._rebuild_clients()
        provision_module.provision()  # looked up now: tests/infra/cfn_provision.py swaps it
        self.baseline = Baseline(
            structure=_structure(),
            services=frozenset(
                service.service_name for service in _backend_dicts() if any(True for _ in _region_backends(service))
            ),
        )
        self.full_provisions += 1

    def _rebuild_clients(self) -> None:
        """New clients for the current settings, and every PynamoDB model bound to them."""
        from chalicelib.table_registry import all_models

        aws.reset()
        aws.bind_tables()
        for model in all_models():
            aws.reset_model_binding(model)
        self._clients = dict(aws._clients)
        self._client_settings = client_settings()

    def _clients_unchanged(self) -> bool:
        current = aws._clients
        return (
            self._clients is not None
            and current.keys() == self._clients.keys()
            and all(current[key] is value for key, value in self._clients.items())
        )

    def _clients_still_clean(self) -> bool:
        """No client a test swapped (aws.set_client) or wrapped; lazily created real ones may stay."""
        if self._clients is None:
            return False
        current = aws._clients
        return all(current.get(key) is value for key, value in self._clients.items()) and all(
            _is_real_client(value) for key, value in current.items() if key not in self._clients
        )


def _reapply() -> None:
    """Provisioning's steps for the services reset before each test (`_REAPPLIED`)."""
    from chalicelib.local.provision import verify_local_sender

    verify_local_sender()


EMULATOR = Emulator()
