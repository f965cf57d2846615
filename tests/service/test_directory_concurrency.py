"""Races: one winner for a unique name, no lost membership updates.

DynamoDB executes each request atomically; in-process moto does not lock, so a
thread switch inside its transaction code could interleave two requests in ways
the real service never would. The `linearizable_moto` fixture serialises moto's
request handling to restore that guarantee; the code under test still races for
real (reads, retries and conditions interleave freely between requests).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from moto.core.botocore_stubber import BotocoreStubber

from chalicelib.catalog import service as services
from chalicelib.directory import teams, users
from chalicelib.directory.tables import TeamRecord
from chalicelib.errors import Conflict
from chalicelib.store import owner_of
from tests.conftest import NOW


@pytest.fixture
def linearizable_moto(monkeypatch):
    lock = threading.Lock()
    original = BotocoreStubber.process_request

    def process_request(self, request):
        with lock:
            return original(self, request)

    monkeypatch.setattr(BotocoreStubber, "process_request", process_request)


def _race(count: int, work: Callable[[int], Any]) -> tuple[list[Any], list[BaseException]]:
    """Start `count` calls together; return their results and errors."""
    barrier = threading.Barrier(count)

    def run(index: int) -> Any:
        barrier.wait()
        return work(index)

    results, errors = [], []
    with ThreadPoolExecutor(max_workers=count) as pool:
        for future in [pool.submit(run, i) for i in range(count)]:
            try:
                results.append(future.result())
            except Exception as error:
                errors.append(error)
    return results, errors


def test_racing_user_creates_with_one_email_have_one_winner(org, linearizable_moto):
    oid = org.organization_id
    results, errors = _race(
        6, lambda i: users.create_user(organization_id=oid, name=f"Ann {i}", email="ANN@example.com", now=NOW)
    )
    assert len(results) == 1
    assert len(errors) == 5
    assert all(isinstance(e, Conflict) for e in errors), errors
    listed = users.list_users(organization_id=oid)
    assert [u.user_id for u in listed] == [results[0].user_id]
    assert owner_of(organization_id=oid, unique_key="user-email#ann@example.com") == results[0].user_id


def test_racing_team_creates_with_one_name_have_one_winner(org, linearizable_moto):
    oid = org.organization_id
    results, errors = _race(
        4, lambda i: teams.create_team(organization_id=oid, name="SRE" if i % 2 else "sre", now=NOW)
    )
    assert len(results) == 1
    assert all(isinstance(e, Conflict) for e in errors), errors
    assert [t.team_id for t in teams.list_teams(organization_id=oid)] == [results[0].team_id]


def test_racing_service_creates(org, linearizable_moto):
    oid = org.organization_id
    same, same_errors = _race(4, lambda i: services.create_service(organization_id=oid, name="API", now=NOW))
    assert len(same) == 1
    assert all(isinstance(e, Conflict) for e in same_errors), same_errors
    distinct, distinct_errors = _race(5, lambda i: services.create_service(organization_id=oid, name=f"S{i}", now=NOW))
    assert distinct_errors == []
    ids = {s.service_id for s in same + distinct}
    assert len(ids) == 6
    assert all(i.startswith("SER-") for i in ids)
    assert len(services.list_services(organization_id=oid)) == 6


def test_concurrent_member_changes_lose_nothing(org, linearizable_moto):
    oid = org.organization_id
    people = [
        users.create_user(organization_id=oid, name=f"P{i}", email=f"p{i}@example.com", now=NOW) for i in range(8)
    ]
    leavers = people[:3]
    team = teams.create_team(organization_id=oid, name="Core", now=NOW, member_ids=[p.user_id for p in leavers])
    version = TeamRecord.get(oid, team.team_id).version

    def change(i: int) -> Any:
        if i < 3:
            return teams.remove_member(organization_id=oid, team_id=team.team_id, user_id=leavers[i].user_id)
        return teams.add_member(organization_id=oid, team_id=team.team_id, user_id=people[i].user_id)

    _, errors = _race(8, change)
    assert errors == []
    final = teams.get_team(organization_id=oid, team_id=team.team_id)
    assert sorted(final.member_ids) == sorted(p.user_id for p in people[3:])
    assert TeamRecord.get(oid, team.team_id).version == version + 8


def test_concurrent_email_changes_keep_guards_consistent(org, linearizable_moto):
    oid = org.organization_id
    ann = users.create_user(organization_id=oid, name="Ann", email="ann@example.com", now=NOW)
    _, errors = _race(
        4, lambda i: users.update_user(organization_id=oid, user_id=ann.user_id, now=NOW, email=f"ann{i}@example.com")
    )
    assert errors == []
    final = users.get_user(organization_id=oid, user_id=ann.user_id)
    assert final.email in {f"ann{i}@example.com" for i in range(4)}
    # Exactly one guard remains, the one for the final email.
    for candidate in ["ann@example.com"] + [f"ann{i}@example.com" for i in range(4)]:
        expected = ann.user_id if candidate == final.email else None
        assert owner_of(organization_id=oid, unique_key=f"user-email#{candidate}") == expected, candidate
