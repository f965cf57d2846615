"""chalicelib.api.resource: what a Resource declares for each operation, and its handlers (the
domain function called by the item's key, `now` and the body's arguments; presented; paginated);
and how request models name their fields for the domain (RequestModel.arguments)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, ClassVar, cast

import pytest
from chalice.app import Request

from chalicelib.api import operation
from chalicelib.api.idempotent import IDEMPOTENT
from chalicelib.api.operation import Call, Idempotent, OperationGroup
from chalicelib.api.resource import Resource, by_organization, each
from chalicelib.auth.principal import Principal
from chalicelib.model_base import ApiModel, PatchModel, RequestModel, VersionedPatchModel
from chalicelib.oncall.models import DeletedV1
from chalicelib.pagination import Page, PageQuery
from chalicelib.settings import get_settings

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


class ThingV1(ApiModel):
    id: str
    name: str

    @classmethod
    def of(cls, thing: dict[str, str]) -> ThingV1:
        return cls(id=thing["id"], name=thing["name"])


class Part(RequestModel):
    label: str

    def to_domain(self) -> str:
        return self.label.upper()


class ThingCreate(RequestModel):
    domain_names: ClassVar[dict[str, str]] = {"title": "name"}
    domain_lists: ClassVar[frozenset[str]] = frozenset({"parts"})

    title: str
    parts: list[Part] = []


class ThingPatch(VersionedPatchModel):
    domain_names: ClassVar[dict[str, str]] = {"title": "name"}

    title: str | None = None


class PlainPatch(PatchModel):
    name: str | None = None


@pytest.fixture(autouse=True)
def own_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This module's operations stay out of the app's registry (and its OpenAPI document)."""
    monkeypatch.setattr(operation, "_BOUND", {})
    yield


def _things() -> Resource:
    return Resource(
        OperationGroup("tests.things", tag="things"),
        "/api/v1/things",
        "thing_id",
        ThingV1,
        each(ThingV1.of),
        read="things:read",
        write="things:write",
    )


def _call(path: dict[str, str], *, body: Any = None, query: Any = None) -> Call:
    principal = Principal("org_1", "api_key", frozenset(), display_name="ci-bot")
    # The handlers read no request: what they need is parsed into the call already.
    return Call(
        principal=principal,
        body=body,
        query=query,
        path=path,
        request=cast(Request, None),
        now=NOW,
        settings=get_settings(),
    )


def _declared(method: str, path: str) -> operation.BoundOperation:
    bound = operation.bound(method, path)
    assert bound is not None
    return bound


def test_item_operations_call_the_domain_by_the_items_key_and_present_its_answer() -> None:
    things = _things()
    seen: list[dict[str, Any]] = []

    def get_thing(**key: Any) -> dict[str, str]:
        seen.append(key)
        return {"id": key["thing_id"], "name": "Thing"}

    things.get("getThing", "Get a thing", get_thing)
    declared = _declared("GET", "/api/v1/things/{thing_id}")
    assert (declared.operation.scope, declared.operation.response, declared.operation.errors) == (
        "things:read",
        ThingV1,
        (404,),
    )
    answer = declared.handler(_call({"thing_id": "t1"}))
    assert answer == ThingV1(id="t1", name="Thing")
    assert seen == [{"organization_id": "org_1", "thing_id": "t1"}]


def test_an_update_passes_now_and_the_bodys_arguments_with_the_version_it_read() -> None:
    things = _things()
    seen: list[dict[str, Any]] = []

    def update_thing(**arguments: Any) -> dict[str, str]:
        seen.append(arguments)
        return {"id": arguments["thing_id"], "name": arguments["name"]}

    things.update("updateThing", "Update a thing", ThingPatch, update_thing)
    declared = _declared("PATCH", "/api/v1/things/{thing_id}")
    assert (declared.operation.scope, declared.operation.body, declared.operation.errors) == (
        "things:write",
        ThingPatch,
        (400, 404, 409),
    )
    body = ThingPatch.model_validate({"title": "New", "version": 3})
    assert declared.handler(_call({"thing_id": "t1"}, body=body)) == ThingV1(id="t1", name="New")
    assert seen == [{"organization_id": "org_1", "thing_id": "t1", "now": NOW, "expected_version": 3, "name": "New"}]


def test_delete_answers_the_id_and_deleted() -> None:
    things = _things()
    removed: list[dict[str, Any]] = []
    things.delete("deleteThing", "Delete a thing", lambda **key: removed.append(key), errors=(404, 409))
    declared = _declared("DELETE", "/api/v1/things/{thing_id}")
    assert (declared.operation.response, declared.operation.errors) == (DeletedV1, (404, 409))
    assert declared.handler(_call({"thing_id": "t9"})) == DeletedV1(id="t9", deleted=True)
    assert removed == [{"organization_id": "org_1", "thing_id": "t9"}]


def test_a_list_presents_only_the_page_it_answers() -> None:
    presented: list[int] = []

    def present(_call: Call, items: Any) -> list[ThingV1]:
        presented.append(len(items))
        return [ThingV1.of(item) for item in items]

    things = Resource(
        OperationGroup("tests.things", tag="things"), "/api/v1/things", "thing_id", ThingV1, present, None, None
    )
    everything = [{"id": f"t{n}", "name": str(n)} for n in range(5)]
    things.listing("listThings", "List things", lambda _call, _query: everything)
    declared = _declared("GET", "/api/v1/things")
    assert (declared.operation.query, declared.operation.response, declared.operation.errors) == (
        PageQuery,
        Page[ThingV1],
        (400,),
    )
    page = declared.handler(_call({}, query=PageQuery(limit=2, offset=2)))
    assert page.model_dump(mode="json") == {
        "items": [{"id": "t2", "name": "2"}, {"id": "t3", "name": "3"}],
        "total": 5,
        "has_more": True,
        "next_offset": 4,
    }
    assert presented == [2]


def test_an_idempotent_create_documents_the_header_and_the_rule_after_its_own_words() -> None:
    things = _things()
    made: list[dict[str, Any]] = []

    def create_thing(**arguments: Any) -> dict[str, str]:
        made.append(arguments)
        return {"id": "t1", "name": arguments["name"]}

    things.create(
        "createThing",
        "Create a thing",
        ThingCreate,
        things.by_key(create_thing, actor="created_by"),
        description="Things are unique.",
        idempotent=Idempotent(),
    )
    declared = _declared("POST", "/api/v1/things")
    declared_op = declared.operation
    assert (declared_op.status, declared_op.headers, declared_op.scope) == (201, ("Idempotency-Key",), "things:write")
    assert declared_op.description == f"Things are unique. {IDEMPOTENT}"
    body = ThingCreate.model_validate({"title": "One", "parts": [{"label": "a"}]})
    assert declared.handler(_call({}, body=body)) == ThingV1(id="t1", name="One")
    assert made == [{"organization_id": "org_1", "now": NOW, "created_by": "ci-bot", "name": "One", "parts": ["A"]}]


def test_an_action_answers_its_own_model_and_a_key_may_carry_now_already() -> None:
    things = Resource(
        OperationGroup("tests.things", tag="things"),
        "/api/v1/things",
        "thing_id",
        ThingV1,
        each(ThingV1.of),
        read=None,
        write="things:write",
        key=lambda call: {**by_organization(call), "now": call.now},
    )
    ran: list[dict[str, Any]] = []
    things.act(
        "POST",
        "/rotate",
        "rotateThing",
        "Rotate a thing",
        lambda **arguments: ran.append(arguments) or "secret",
        response=DeletedV1,
        present=lambda _call, secret: DeletedV1(id=secret, deleted=False),
        status=202,
    )
    declared = _declared("POST", "/api/v1/things/{thing_id}/rotate")
    assert (declared.operation.status, declared.operation.response) == (202, DeletedV1)
    assert declared.handler(_call({"thing_id": "t1"})) == DeletedV1(id="secret", deleted=False)
    assert ran == [{"organization_id": "org_1", "thing_id": "t1", "now": NOW}]


def test_request_models_name_their_fields_as_the_domain_takes_them() -> None:
    assert ThingCreate.model_validate({"title": "T"}).arguments() == {"name": "T", "parts": []}
    assert PlainPatch.model_validate({"name": "N"}).arguments() == {"name": "N"}
    # A versioned PATCH without a version applies to the latest one.
    assert ThingPatch.model_validate({"title": "T"}).arguments() == {"expected_version": None, "name": "T"}
