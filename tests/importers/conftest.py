"""Stand-ins for the importer tests: PagerDuty over HTTPS (a throw-away CA), Opsgenie over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tests.importers import account, opsgenie_account, pagerduty_account, tls
from tests.importers.standin_opsgenie import OpsgenieStandIn
from tests.importers.standin_pagerduty import PagerDutyStandIn

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="session")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> tls.Tls:
    return tls.make(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def trusted(certificates: tls.Tls, monkeypatch: pytest.MonkeyPatch) -> tls.Tls:
    """The stand-ins' CA named where clients look (as a test would for a private CA)."""
    monkeypatch.setenv("SSL_CERT_FILE", str(certificates.ca_path))
    return certificates


@pytest.fixture
def pagerduty(trusted: tls.Tls) -> Iterator[PagerDutyStandIn]:
    server = PagerDutyStandIn(pagerduty_account.account(NOW), trusted, now=NOW).start()
    yield server
    server.stop()


@pytest.fixture
def opsgenie() -> Iterator[OpsgenieStandIn]:
    server = OpsgenieStandIn(opsgenie_account.account(NOW)).start()
    yield server
    server.stop()


@pytest.fixture
def small_pagerduty(trusted: tls.Tls) -> Iterator[PagerDutyStandIn]:
    """A smaller account, for the tests that apply it to the app in process (every write on the
    emulator costs tens of milliseconds); the e2e tests and the bench import the real-sized one."""
    server = PagerDutyStandIn(pagerduty_account.account(NOW, account.SMALL), trusted, now=NOW).start()
    yield server
    server.stop()


@pytest.fixture
def small_opsgenie() -> Iterator[OpsgenieStandIn]:
    server = OpsgenieStandIn(opsgenie_account.account(NOW, account.SMALL)).start()
    yield server
    server.stop()
