"""The readers against the stand-ins: every object read, pages followed (PagerDuty's more,
Opsgenie's paging.next even when it names another host), a 429 waited out for exactly its
Retry-After, a refused credential one clear message, a part the vendor does not serve listed."""

from __future__ import annotations

import pytest

from chalicelib.client.importers import pagerduty_reader, vendor_http
from chalicelib.client.importers.opsgenie_reader import OpsgenieReader
from tests.importers.conftest import NOW
from tests.importers.standin_opsgenie import OpsgenieStandIn
from tests.importers.standin_pagerduty import PagerDutyStandIn
from tests.importers.tls import Tls


def read_pagerduty(server: PagerDutyStandIn, token: str = "pd-test-token") -> tuple[object, list[float]]:
    waits: list[float] = []
    client = pagerduty_reader.client(token, server.base_url, sleep=waits.append)
    return pagerduty_reader.PagerDutyReader(client, now=NOW).read(), waits


def test_pagerduty_reads_the_whole_account(pagerduty: PagerDutyStandIn) -> None:
    account, waits = read_pagerduty(pagerduty)
    assert account.counts() == {  # type: ignore[attr-defined]
        "users": 40,
        "teams": 8,
        "schedules": 10,
        "escalation policies": 12,
        "services": 30,
        "integrations": 40,
        "maintenance windows": 2,
    }
    assert waits == [] and account.unavailable == {}  # type: ignore[attr-defined]
    users = [s for s in pagerduty.seen if s.path == "/users"]
    assert [s.query.get("offset") for s in users] == [["0"], ["25"]]  # 40 users, pages of 25
    schedule = account.schedules[0]  # type: ignore[attr-defined]
    assert schedule["final_schedule"]["rendered_schedule_entries"] and schedule["overrides"]
    assert all("address" in m for u in account.users for m in u["contact_methods"])  # type: ignore[attr-defined]


def test_pagerduty_fetches_what_a_list_gave_as_references(pagerduty: PagerDutyStandIn) -> None:
    pagerduty.route(r"/users", lambda m, q: pagerduty._users(m, {k: v for k, v in q.items() if k != "include[]"}))
    pagerduty.routes.insert(0, pagerduty.routes.pop())
    account, _ = read_pagerduty(pagerduty)
    assert len([s for s in pagerduty.seen if s.path.endswith("/contact_methods")]) == 40
    assert all("address" in m for u in account.users for m in u["contact_methods"])  # type: ignore[attr-defined]


def test_pagerduty_429_waits_for_retry_after(pagerduty: PagerDutyStandIn) -> None:
    pagerduty.throttle += [7, 3]
    account, waits = read_pagerduty(pagerduty)
    assert waits == [7.0, 3.0]
    assert [s.status for s in pagerduty.seen[:3]] == [429, 429, 200]
    assert len(account.users) == 40  # type: ignore[attr-defined]


def test_pagerduty_refused_token_and_endless_429(pagerduty: PagerDutyStandIn) -> None:
    with pytest.raises(vendor_http.VendorError, match=r"PagerDuty refused the API token \(401\)"):
        read_pagerduty(pagerduty, token="wrong")
    pagerduty.throttle += [1] * 20
    with pytest.raises(vendor_http.VendorError, match="still rate limited"):
        read_pagerduty(pagerduty)


def test_pagerduty_url_must_be_https_and_a_missing_part_is_listed(pagerduty: PagerDutyStandIn) -> None:
    with pytest.raises(vendor_http.VendorError, match="https"):
        pagerduty_reader.client("t", "http://localhost:1")
    pagerduty.routes = [r for r in pagerduty.routes if "members" not in r[0].pattern]
    account, _ = read_pagerduty(pagerduty)
    assert account.unavailable == {"team members": "GET /teams/PTEAM00/members: 404"}  # type: ignore[attr-defined]


def test_a_ca_named_by_requests_ca_bundle_alone_is_trusted(
    pagerduty: PagerDutyStandIn, trusted: Tls, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", "/nonexistent/ca.pem")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(trusted.ca_path))
    account, _ = read_pagerduty(pagerduty)
    assert len(account.teams) == 8  # type: ignore[attr-defined]


def opsgenie_reader(server: OpsgenieStandIn, key: str = "og-test-key") -> tuple[OpsgenieReader, list[float]]:
    waits: list[float] = []
    client = vendor_http.opsgenie_client(server.base_url, key)
    client.sleep = waits.append
    return OpsgenieReader(client), waits


def test_opsgenie_reads_the_whole_account_following_paging_next(opsgenie: OpsgenieStandIn) -> None:
    reader, waits = opsgenie_reader(opsgenie)
    account = reader.read()
    assert account.counts() == {
        "users": 40,
        "teams": 8,
        "schedules": 10,
        "escalations": 12,
        "services": 30,
        "integrations": 40,
        "maintenances": 1,
        "heartbeats": 3,
    }
    assert [s.query.get("offset") for s in opsgenie.seen if s.path == "/v2/users"] == [["0"], ["20"]]
    assert all(s.method == "GET" for s in opsgenie.seen) and waits == []
    user = account.users[0]
    assert user["contacts"] and user["notificationRules"][0]["steps"]
    assert account.teams[0]["members"] and account.teams[0]["routingRules"]
    assert account.schedules[0]["rotations"] and account.maintenances[0]["rules"]


def test_opsgenie_429_refused_key_and_a_service_api_it_does_not_answer() -> None:
    from tests.importers import opsgenie_account

    server = OpsgenieStandIn(opsgenie_account.account(NOW), services=False).start()
    try:
        server.throttle.append(4)
        reader, waits = opsgenie_reader(server)
        account = reader.read()
        assert waits == [4.0] and account.services is None
        assert account.unavailable == {"services": "GET /v1/services: 404 Could not find /v1/services"}
        with pytest.raises(vendor_http.VendorError, match=r"Opsgenie refused the API key \(401\)"):
            opsgenie_reader(server, key="wrong")[0].read()
    finally:
        server.stop()


def test_retry_after_reads_either_header_and_is_bounded() -> None:
    assert vendor_http.retry_after({"Retry-After": "2"}, 0) == 2.0
    assert vendor_http.retry_after({"X-RateLimit-Period-In-Sec": "9"}, 0) == 9.0
    assert vendor_http.retry_after({"Retry-After": "86400"}, 0) == vendor_http.MAX_WAIT_SECONDS
    assert vendor_http.retry_after({"Retry-After": "soon"}, 1) == 10.0
    assert vendor_http.retry_after(None, 0) == vendor_http.DEFAULT_WAIT_SECONDS


def test_opsgenie_schedules_listed_without_rotations_are_read_one_by_one() -> None:
    from tests.importers import opsgenie_account

    served = opsgenie_account.account(NOW)
    server = OpsgenieStandIn(served)
    server.routes = [r for r in server.routes if r[0].pattern != "^/v2/schedules$"]
    server.route(
        r"/v2/schedules", lambda m, q: server._data([{"id": s["id"], "name": s["name"]} for s in served["schedules"]])
    )
    server.route(r"/v2/schedules/([\w-]+)", lambda m, q: server._data(server.schedules.get(m.group(1))))
    server.start()
    try:
        reader, _ = opsgenie_reader(server)
        account = reader.read()
        assert [len(s["rotations"]) for s in account.schedules] == [len(s["rotations"]) for s in served["schedules"]]
        assert "schedule rotations" not in account.unavailable
    finally:
        server.stop()
