"""One queue message reads each item once (the read scope of the worker entry point), and a
stale remembered incident never loses an update: the version check fails, the retry reads again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib import aws, clock
from chalicelib.incident import repository
from chalicelib.incident.tables import IncidentRecord
from chalicelib.settings import get_settings
from chalicelib.store import scope
from chalicelib.workers import dispatch
from tests.conftest import NOW, Org
from tests.service import test_escalation_runtime as runtime
from tests.service.test_escalation_runtime import create, drain, fake_slack  # noqa: F401 (a fixture)


class Requests:
    """DynamoDB requests made through the app's clients, as (operation, short table) pairs."""

    def __init__(self) -> None:
        self.seen: Counter[tuple[str, str]] = Counter()

    def _before_build(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        tables = [str(params["TableName"])] if "TableName" in params else []
        tables += [str(name) for name in params.get("RequestItems") or {}]
        for item in params.get("TransactItems") or []:
            tables += [str(action["TableName"]) for action in item.values() if "TableName" in action]
        prefix = get_settings().table_prefix
        for name in tables:
            self.seen[(model.name, name.removeprefix(prefix))] += 1

    def install(self) -> None:
        for client in (aws._dynamodb_client(), aws.client("dynamodb")):
            client.meta.events.register("before-parameter-build.dynamodb", self._before_build)

    def uninstall(self) -> None:
        for client in (aws._dynamodb_client(), aws.client("dynamodb")):
            client.meta.events.unregister("before-parameter-build.dynamodb", self._before_build)


@pytest.fixture
def on_call(org: Org, fake_slack: Any) -> dict[str, Any]:  # noqa: F811 (the imported fixture)
    """The escalation runtime tests' set-up: Ana at level 1, Bo at level 2 of the service's policy."""
    return runtime.setup.__wrapped__(org, fake_slack)  # type: ignore[attr-defined,no-any-return]


@pytest.fixture
def requests_seen(aws_env: None) -> Iterator[Requests]:
    seen = Requests()
    seen.install()
    yield seen
    seen.uninstall()


def test_the_consumers_of_a_new_incident_read_the_incident_and_its_service_once(
    org: Org, on_call: dict[str, Any], requests_seen: Requests
) -> None:
    number = create(org, on_call)
    created = next(m for m in drain() if m.message_type == "incident.created")
    requests_seen.seen.clear()
    with clock.frozen(NOW):
        result = dispatch.handle_records([{"messageId": "m1", "body": created.to_json()}])
    assert result == {"batchItemFailures": []}
    seen = requests_seen.seen
    # Assignment and escalation both changed it (two writes), and read it once.
    assert seen[("GetItem", "incidents")] == 1
    assert seen[("TransactWriteItems", "incidents")] >= 2
    assert seen[("BatchGetItem", "services")] == 1
    assert seen[("GetItem", "escalation-policies")] == 1
    assert seen[("BatchGetItem", "users")] == 1
    assert seen[("Query", "users")] == 0  # the assignee's email was known from the batch read
    incident = repository.get_incident(org.organization_id, number)
    assert incident.assigned_email == "ana@acme.test"
    assert incident.escalation is not None


def test_a_remembered_incident_changed_by_someone_else_is_read_again_and_nothing_is_lost(
    org: Org, on_call: dict[str, Any]
) -> None:
    number = create(org, on_call)
    with scope.read_scope():
        remembered = repository.get_incident(org.organization_id, number)
        # Someone else (another worker, an API request) changes it: our copy is now stale.
        with_other = repository.get_incident(org.organization_id, number)
        other = IncidentRecord.from_raw_data(with_other.serialize())
        other.title = "Changed by someone else"
        other.save()
        attempts: list[str] = []

        def change() -> None:
            incident = repository.get_incident(org.organization_id, number)
            attempts.append(incident.title)
            incident.description = "Changed by the worker"
            repository.commit(incident, [])

        repository.with_version_retries(change)
        assert remembered.title != "Changed by someone else"
    assert attempts == [remembered.title, "Changed by someone else"]
    final = repository.get_incident(org.organization_id, number)
    assert (final.title, final.description) == ("Changed by someone else", "Changed by the worker")


def test_each_caller_gets_its_own_copy_of_a_remembered_incident(org: Org, on_call: dict[str, Any]) -> None:
    number = create(org, on_call)
    with scope.read_scope():
        first = repository.get_incident(org.organization_id, number)
        first.title = "Not committed"
        second = repository.get_incident(org.organization_id, number)
        assert second.title == "Checkout down"
