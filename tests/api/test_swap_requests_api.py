"""Swap requests over the API (every error path), coverage_gaps on schedules and policies, and
policy targets limited to people who can respond."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.directory import users
from chalicelib.oncall import Layer, Restriction
from chalicelib.oncall import service as schedules
from tests.conftest import NOW, Org, make_org
from tests.kit import factories as make
from tests.kit.api import call, session_jwt

pytestmark = pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")

BASE = "/api/v1/schedules"
SWAP_FIELDS = {
    "id",
    "schedule_id",
    "requester_id",
    "start",
    "end",
    "note",
    "status",
    "created_at",
    "taken_by",
    "taken_at",
    "override_id",
    "withdrawn_at",
    "expired_at",
    "version",
}


def iso(moment: Any) -> str:
    return clock.isoformat(moment).replace(".000Z", "Z")


@pytest.fixture
def world(client: Any, org: Org) -> dict[str, Any]:
    """A daily rotation (ana today, bo tomorrow) from 09:00Z today; NOW is Sunday 12:00Z."""
    clock.freeze(NOW)
    ana, bo = make.person(org, "Ana"), make.person(org, "Bo")
    owner, viewer = make.person(org, "Olga", role="owner"), make.person(org, "Vi", role="viewer")
    stored = make.schedule(org, ana, bo, rotation="daily", start=NOW - timedelta(hours=3), name="Payments")
    tokens = {p.name: session_jwt(org.organization_id, p.user_id, p.role) for p in (ana, bo, owner, viewer)}
    return {
        "people": {"ana": ana, "bo": bo, "owner": owner, "viewer": viewer},
        "tokens": tokens,
        "path": f"{BASE}/{stored.schedule_id}/swap-requests",
        "schedule_id": stored.schedule_id,
        "org": org,
    }


def span(hours_from: int = 2, hours_to: int = 6) -> dict[str, str]:
    return {"start": iso(NOW + timedelta(hours=hours_from)), "end": iso(NOW + timedelta(hours=hours_to))}


def ask(client: Any, world: dict[str, Any], who: str = "Ana", body: Any = None) -> Any:
    return call(client, "POST", world["path"], world["tokens"][who], span() if body is None else body)


def test_ask_read_list_take(client: Any, world: dict[str, Any]) -> None:
    status, created = ask(client, world, body={**span(), "note": "dentist"})
    assert status == 201, created
    request = created["data"]
    assert set(request) == SWAP_FIELDS
    assert (request["status"], request["requester_id"], request["note"]) == (
        "open",
        world["people"]["ana"].user_id,
        "dentist",
    )
    assert (request["start"], request["end"]) == ("2026-11-22T14:00:00Z", "2026-11-22T18:00:00Z")
    item = f"{world['path']}/{request['id']}"
    assert call(client, "GET", item, world["tokens"]["Vi"]).json["data"] == request  # a viewer reads
    listed = call(client, "GET", world["path"] + "?status=open", world["tokens"]["Bo"]).json["data"]
    assert [r["id"] for r in listed["items"]] == [request["id"]] and listed["total"] == 1
    assert call(client, "GET", world["path"] + "?status=taken", world["tokens"]["Bo"]).json["data"]["items"] == []

    status, taken = call(client, "POST", item + "/take", world["tokens"]["Bo"])
    assert status == 200, taken
    answer = taken["data"]
    assert answer["swap_request"]["status"] == "taken"
    assert answer["swap_request"]["taken_by"] == answer["user_id"] == world["people"]["bo"].user_id
    assert (answer["start"], answer["end"]) == (request["start"], request["end"])
    schedule = call(client, "GET", f"{BASE}/{world['schedule_id']}", world["tokens"]["Vi"]).json["data"]
    assert [(o["override_id"], o["user_id"]) for o in schedule["overrides"]] == [
        (answer["override_id"], answer["user_id"])
    ]
    shifts = call(client, "GET", f"{BASE}/{world['schedule_id']}/shifts", world["tokens"]["Vi"]).json["data"]["shifts"]
    assert [(s["user"]["id"], s["source"], s["start"]) for s in shifts[:2]] == [
        (world["people"]["ana"].user_id, "layer", "2026-11-22T12:00:00Z"),
        (world["people"]["bo"].user_id, "override", "2026-11-22T14:00:00Z"),
    ]
    again = call(client, "POST", item + "/take", world["tokens"]["Bo"])
    assert (again.status_code, again.error_code) == (409, "CONFLICT")
    assert call(client, "POST", item + "/withdraw", world["tokens"]["Ana"]).status_code == 409


@pytest.mark.parametrize(
    ("who", "body", "status", "code", "fields"),
    [
        ("Bo", span(), 400, "VALIDATION_ERROR", ["start"]),  # bo is not on call today
        ("Ana", span(2, 30), 400, "VALIDATION_ERROR", ["end"]),  # runs into bo's day
        ("Ana", span(6, 2), 400, "VALIDATION_ERROR", ["end"]),
        ("Ana", span(-5, -1), 400, "VALIDATION_ERROR", ["end"]),
        ("Ana", {"start": iso(NOW)}, 400, "VALIDATION_ERROR", ["end"]),
        ("Ana", {**span(), "start": "tomorrow"}, 400, "VALIDATION_ERROR", ["start"]),
        ("Ana", {**span(), "note": "x" * 501}, 400, "VALIDATION_ERROR", ["note"]),
        ("Ana", {**span(), "requester_id": "someone"}, 400, "VALIDATION_ERROR", ["requester_id"]),
        ("Vi", span(), 403, "FORBIDDEN", None),  # a viewer takes no part
        ("Olga", span(), 400, "VALIDATION_ERROR", ["start"]),  # an owner off the rotation is not on call
    ],
)
def test_asking_is_refused(
    client: Any, world: dict[str, Any], who: str, body: Any, status: int, code: str, fields: list[str] | None
) -> None:
    answer = ask(client, world, who, body)
    assert (answer.status_code, answer.error_code) == (status, code), answer.json
    if fields is not None:
        assert answer.fields == fields
    assert call(client, "GET", world["path"], world["tokens"]["Vi"]).json["data"]["total"] == 0


def test_credentials_schedules_and_other_organizations(client: Any, world: dict[str, Any], org: Org) -> None:
    assert call(client, "POST", world["path"], None, span()).status_code == 401
    service_key = make.api_key(org, "oncall:read", "oncall:write")
    refused = call(client, "POST", world["path"], service_key, span())
    assert (refused.status_code, refused.error_code) == (403, "FORBIDDEN")
    assert "made by a person" in refused.json["error"]["message"]
    no_scope = make.api_key(org, "incidents:read")
    assert call(client, "GET", world["path"], no_scope).status_code == 403
    assert call(client, "POST", f"{BASE}/sch_nope/swap-requests", world["tokens"]["Ana"], span()).status_code == 404
    assert call(client, "GET", f"{BASE}/sch_nope/swap-requests", world["tokens"]["Ana"]).status_code == 404
    assert call(client, "GET", world["path"] + "?status=maybe", world["tokens"]["Ana"]).status_code == 400
    other = make_org("Other")
    stranger = make.person(other, "Stranger")
    foreign = session_jwt(other.organization_id, stranger.user_id, "owner")
    assert call(client, "GET", world["path"], foreign).status_code == 404  # their own organization has no such schedule
    created = ask(client, world).json["data"]
    item = f"{world['path']}/{created['id']}"
    assert call(client, "POST", item + "/take", foreign).status_code == 404
    assert call(client, "POST", item + "/withdraw", foreign).status_code == 404
    assert call(client, "GET", f"{world['path']}/swp_nope", world["tokens"]["Ana"]).status_code == 404
    assert call(client, "GET", f"{world['path']}/not%20an%20id", world["tokens"]["Ana"]).status_code == 404
    assert call(client, "POST", f"{world['path']}/swp_nope/take", world["tokens"]["Bo"]).status_code == 404


def test_who_may_take_and_withdraw(client: Any, world: dict[str, Any]) -> None:
    created = ask(client, world).json["data"]
    item = f"{world['path']}/{created['id']}"
    assert call(client, "POST", item + "/take", world["tokens"]["Vi"]).status_code == 403
    outsider = call(client, "POST", item + "/take", world["tokens"]["Olga"])  # an owner, not in the rotation
    assert (outsider.status_code, outsider.json["error"]["message"]) == (
        403,
        "Only members of the schedule's rotations can take its shifts.",
    )
    own = call(client, "POST", item + "/take", world["tokens"]["Ana"])
    assert own.status_code == 409 and "withdraw the request instead" in own.json["error"]["message"]
    assert call(client, "POST", item + "/withdraw", world["tokens"]["Bo"]).status_code == 403
    assert call(client, "POST", item + "/withdraw", world["tokens"]["Vi"]).status_code == 403
    status, withdrawn = call(client, "POST", item + "/withdraw", world["tokens"]["Ana"])
    assert (status, withdrawn["data"]["status"]) == (200, "withdrawn")
    assert call(client, "POST", item + "/withdraw", world["tokens"]["Ana"]).status_code == 409
    assert call(client, "POST", item + "/take", world["tokens"]["Bo"]).status_code == 409
    second = ask(client, world).json["data"]  # an owner withdraws anyone's
    answer = call(client, "POST", f"{world['path']}/{second['id']}/withdraw", world["tokens"]["Olga"])
    assert answer.json["data"]["status"] == "withdrawn"


def test_a_second_request_overlapping_an_open_one_is_409(client: Any, world: dict[str, Any]) -> None:
    first = ask(client, world).json["data"]
    second = ask(client, world, body=span(5, 8))
    assert (second.status_code, second.json["error"]["details"]) == (409, {"swap_request_id": first["id"]})


def test_an_open_request_past_its_start_reads_as_expired(client: Any, world: dict[str, Any]) -> None:
    created = ask(client, world).json["data"]
    clock.freeze(NOW + timedelta(hours=3))
    listed = call(client, "GET", world["path"], world["tokens"]["Ana"]).json["data"]["items"]
    assert [r["status"] for r in listed] == ["expired"]
    assert call(client, "POST", f"{world['path']}/{created['id']}/take", world["tokens"]["Bo"]).status_code == 409


# --- coverage gaps ---------------------------------------------------------------------------------


def test_schedules_and_policies_carry_their_coverage_gaps(client: Any, world: dict[str, Any], org: Org) -> None:
    ana = world["people"]["ana"]
    layer = Layer(
        "lyr_day",
        "Days",
        (ana.user_id,),
        "daily",
        "09:00",
        NOW - timedelta(days=1),
        restrictions=(Restriction.daily("09:00", "17:00"),),
    )
    days = schedules.create_schedule(
        organization_id=org.organization_id, name="Days", time_zone="UTC", layers=[layer], now=NOW
    )
    token = world["tokens"]["Vi"]
    schedule = call(client, "GET", f"{BASE}/{days.schedule_id}", token).json["data"]
    gaps = schedule["coverage_gaps"]
    assert len(gaps) == 14 and gaps[0] == {"start": "2026-11-22T17:00:00Z", "end": "2026-11-23T09:00:00Z"}
    assert gaps[-1] == {"start": "2026-12-05T17:00:00Z", "end": "2026-12-06T09:00:00Z"}
    full = call(client, "GET", f"{BASE}/{world['schedule_id']}", token).json["data"]
    assert full["coverage_gaps"] == []
    listed = call(client, "GET", BASE, token).json["data"]["items"]
    assert {s["name"]: len(s["coverage_gaps"]) for s in listed} == {"Days": 14, "Payments": 0}

    body = {
        "name": "Checkout",
        "levels": [
            {"targets": [{"kind": "schedule", "id": days.schedule_id}], "delay_minutes": 5},
            {"targets": [{"kind": "user", "id": world["people"]["owner"].user_id}], "delay_minutes": 5},
        ],
    }
    status, created = call(client, "POST", "/api/v1/escalation-policies", org.owner_key, body)
    assert status == 201, created
    assert created["data"]["coverage_gaps"][0] == {
        "start": "2026-11-22T17:00:00Z",
        "end": "2026-11-23T09:00:00Z",
        "levels": [1],
    }
    # The owner is deactivated: level 2 reaches nobody at all, and both levels at night.
    users.update_user(
        organization_id=org.organization_id, user_id=world["people"]["owner"].user_id, now=NOW, is_active=False
    )
    policy = call(client, "GET", f"/api/v1/escalation-policies/{created['data']['id']}", token).json["data"]
    assert policy["coverage_gaps"][:2] == [
        {"start": "2026-11-22T12:00:00Z", "end": "2026-11-22T17:00:00Z", "levels": [2]},
        {"start": "2026-11-22T17:00:00Z", "end": "2026-11-23T09:00:00Z", "levels": [1, 2]},
    ]


@pytest.mark.parametrize(
    ("role", "active", "message"), [("viewer", True, "is a viewer"), ("responder", False, "deactivated")]
)
def test_a_policy_refuses_a_target_who_cannot_respond(
    client: Any, org: Org, role: str, active: bool, message: str
) -> None:
    clock.freeze(NOW)
    person = make.person(org, "Vi Ewer", role=role)
    if not active:
        users.update_user(organization_id=org.organization_id, user_id=person.user_id, now=NOW, is_active=False)
    responder = make.person(org, "Ana")
    body = {
        "name": "Checkout",
        "levels": [
            {
                "targets": [{"kind": "user", "id": responder.user_id}, {"kind": "user", "id": person.user_id}],
                "delay_minutes": 5,
            }
        ],
    }
    answer = call(client, "POST", "/api/v1/escalation-policies", org.owner_key, body)
    assert (answer.status_code, answer.fields) == (400, ["levels.0.targets.1.id"])
    assert message in answer.json["error"]["details"]["fields"][0]["message"]


def test_the_openapi_document_has_the_swap_operations(client: Any) -> None:
    document = call(client, "GET", "/api/v1/openapi.json").json
    paths = document["paths"]
    swap = "/api/v1/schedules/{schedule_id}/swap-requests"
    assert set(paths[swap]) == {"get", "post"}
    assert set(paths[swap + "/{swap_id}/take"]) == {"post"}
    assert set(paths[swap + "/{swap_id}/withdraw"]) == {"post"}
    assert "coverage_gaps" in document["components"]["schemas"]["ScheduleV1"]["properties"]
