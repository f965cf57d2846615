"""A resource's standard operations, declared from one spec: list (a page), create, get, update
(PATCH), delete, and the actions on one item (regenerate, revoke, add a member...).

A route module names its resource once (`Resource`: the collection's path, the item's path
parameter, the answer model and its presenter, the read and write scopes) and then each operation
it has in a line or two: its operationId, summary, the domain function that does the work, and
whatever its document says beyond the shape (description, errors). The handlers are the same
everywhere, so they are written here once:

- item operations (get, update, delete, act) call the domain function by the item's key: the
  keyword arguments `key(call)` gives (by default the caller's `organization_id` and every path
  parameter: `get_policy(organization_id=..., policy_id=...)`); update and act add `now` and the
  body's `arguments()` (a PATCH's changes, with `expected_version` where it is versioned);
- collection operations (list, create) call a function of the call and the parsed query or body,
  written per resource: how a list filters and what a create takes differ from one to the next.
  Most creates take what an item operation takes, and the body's arguments(): `by_key` makes
  that function from the domain's.

Operations that share no shape with these stay plain `OperationGroup.operation`s in their module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from chalicelib.api.idempotent import IDEMPOTENT
from chalicelib.api.operation import Call, Handler, Idempotent, OperationGroup
from chalicelib.model_base import PatchModel, RequestModel
from chalicelib.oncall.models import DeletedV1
from chalicelib.pagination import Page, PageQuery, paginate

Key = Callable[[Call], dict[str, Any]]
# Items (a page's, or one) as their answers; one call per page, so a presenter can batch its lookups.
Present = Callable[[Call, Sequence[Any]], list[Any]]
PresentOne = Callable[[Call, Any], Any]
Find = Callable[[Call, Any], Sequence[Any]]  # every item of the list, from the call and its parsed query
Make = Callable[[Call, Any], Any]  # the created item, from the call and its parsed body
ByKey = Callable[..., Any]  # a domain function called with the item's key (and `now`, arguments)


def settings_of(call: Call, wanted: bool) -> dict[str, Any]:
    """`settings=` the request's settings (`Call.settings`) for a domain function that takes them."""
    return {"settings": call.settings} if wanted else {}


def by_organization(call: Call) -> dict[str, Any]:
    """The caller's organization and every path parameter, named as the domain functions name them."""
    return {"organization_id": call.principal.organization_id, **call.path}


def each(present_one: Callable[[Any], Any]) -> Present:
    """A presenter that needs nothing but the item (`PolicyV1.of`)."""
    return lambda _call, items: [present_one(item) for item in items]


@dataclass(frozen=True)
class Resource:
    group: OperationGroup
    base: str  # the collection's path
    id_param: str  # the item's path parameter: `<base>/{<id_param>}`
    response: type[BaseModel]  # one item's answer
    present: Present
    read: str | None  # the scope of list and get
    write: str | None  # the scope of create, update, delete and the actions
    self_param: str | None = None  # a path parameter naming a user who may act on themself (OperationGroup)
    key: Key = by_organization

    @property
    def item(self) -> str:
        return f"{self.base}/{{{self.id_param}}}"

    def one(self, call: Call, item: Any) -> Any:
        return self.present(call, [item])[0]

    def by_key(self, create: ByKey, *, actor: str | None = None, with_settings: bool = False) -> Make:
        """A create whose domain function takes what an item operation's does: the key (of the
        collection), `now` and the body's arguments(); and the caller's actor as `actor` names it
        (`created_by`), where it records who created."""

        def make(call: Call, body: RequestModel) -> Any:
            who = {actor: call.principal.actor} if actor is not None else {}
            arguments = {**self.key(call), "now": call.now, **who, **body.arguments()}
            return create(**arguments, **settings_of(call, with_settings))

        return make

    def listing(
        self,
        operation_id: str,
        summary: str,
        find: Find,
        *,
        query: type[PageQuery] = PageQuery,
        errors: tuple[int, ...] = (400,),
        description: str | None = None,
    ) -> Handler:
        """GET <base>: every item `find` returns, paginated by the query's limit and offset; only
        the page's items are presented."""

        def handler(call: Call) -> Page[Any]:
            page = paginate(find(call, call.query), limit=call.query.limit, offset=call.query.offset)
            items = self.present(call, page.items)
            return Page[Any](items=items, total=page.total, has_more=page.has_more, next_offset=page.next_offset)

        declare = self.group.operation(
            "GET",
            self.base,
            operation_id=operation_id,
            summary=summary,
            scope=self.read,
            self_param=self.self_param,
            query=query,
            response=Page[self.response],  # type: ignore[name-defined]
            errors=errors,
            description=description,
        )
        return declare(handler)

    def create(
        self,
        operation_id: str,
        summary: str,
        body: type[BaseModel],
        make: Make,
        *,
        suffix: str = "",
        scope: str | None = None,
        response: type[BaseModel] | None = None,
        present: PresentOne | None = None,
        errors: tuple[int, ...] = (400,),
        description: str | None = None,
        idempotent: Idempotent | None = None,
    ) -> Handler:
        """POST <base><suffix>: 201 with what `make` created, presented (by `present` where the
        answer is another model: a secret shown once). `idempotent`: at most once per
        Idempotency-Key, the header and the rule in its document."""
        if idempotent is not None:
            description = f"{description} {IDEMPOTENT}" if description else IDEMPOTENT
        answer = present or self.one

        def handler(call: Call) -> Any:
            return answer(call, make(call, call.body))

        declare = self.group.operation(
            "POST",
            self.base + suffix,
            operation_id=operation_id,
            summary=summary,
            scope=scope or self.write,
            self_param=self.self_param,
            body=body,
            response=response or self.response,
            status=201,
            errors=errors,
            description=description,
            headers=("Idempotency-Key",) if idempotent is not None else (),
            idempotent=idempotent,
        )
        return declare(handler)

    def get(
        self,
        operation_id: str,
        summary: str,
        fetch: ByKey,
        *,
        suffix: str = "",
        response: type[BaseModel] | None = None,
        present: PresentOne | None = None,
        errors: tuple[int, ...] = (404,),
        description: str | None = None,
        with_settings: bool = False,
    ) -> Handler:
        """GET <item><suffix>: what `fetch` finds by the item's key, presented (by `present` where
        the answer is another model); `with_settings`: `fetch` takes the request's settings too."""
        answer = present or self.one

        def handler(call: Call) -> Any:
            return answer(call, fetch(**self.key(call), **settings_of(call, with_settings)))

        declare = self.group.operation(
            "GET",
            self.item + suffix,
            operation_id=operation_id,
            summary=summary,
            scope=self.read,
            self_param=self.self_param,
            response=response or self.response,
            errors=errors,
            description=description,
        )
        return declare(handler)

    def update(
        self,
        operation_id: str,
        summary: str,
        body: type[PatchModel],
        change: ByKey,
        *,
        suffix: str = "",
        self_param: str | None = None,
        errors: tuple[int, ...] = (400, 404, 409),
        description: str | None = None,
        with_settings: bool = False,
    ) -> Handler:
        """PATCH <item><suffix>: `change` by the item's key, `now` and the body's changes (with
        `expected_version` where the body is versioned); the changed item, presented."""
        return self.act(
            "PATCH",
            suffix,
            operation_id,
            summary,
            change,
            body=body,
            self_param=self_param,
            errors=errors,
            description=description,
            with_settings=with_settings,
        )

    def act(
        self,
        method: str,
        suffix: str,
        operation_id: str,
        summary: str,
        run: ByKey,
        *,
        body: type[RequestModel] | None = None,
        response: type[BaseModel] | None = None,
        present: PresentOne | None = None,
        self_param: str | None = None,
        status: int = 200,
        errors: tuple[int, ...] = (404,),
        description: str | None = None,
        with_settings: bool = False,
    ) -> Handler:
        """<method> <item><suffix>: `run` by the item's key, `now` and the body's arguments(); what
        it returns, presented (by `present` where the answer is another model); `with_settings`:
        `run` takes the request's settings too."""
        answer = present or self.one

        def handler(call: Call) -> Any:
            # A key may name `now` already (a read that writes defaults): it is the same instant.
            arguments = {**self.key(call), "now": call.now, **(call.body.arguments() if body else {})}
            return answer(call, run(**arguments, **settings_of(call, with_settings)))

        declare = self.group.operation(
            method,
            self.item + suffix,
            operation_id=operation_id,
            summary=summary,
            scope=self.write,
            self_param=self_param or self.self_param,
            body=body,
            response=response or self.response,
            status=status,
            errors=errors,
            description=description,
        )
        return declare(handler)

    def delete(
        self,
        operation_id: str,
        summary: str,
        remove: ByKey,
        *,
        errors: tuple[int, ...] = (404,),
        description: str | None = None,
    ) -> Handler:
        """DELETE <item>: `remove` by the item's key; answers {id, deleted: true}."""

        def handler(call: Call) -> DeletedV1:
            remove(**self.key(call))
            return DeletedV1(id=call.path[self.id_param], deleted=True)

        declare = self.group.operation(
            "DELETE",
            self.item,
            operation_id=operation_id,
            summary=summary,
            scope=self.write,
            self_param=self.self_param,
            response=DeletedV1,
            errors=errors,
            description=description,
        )
        return declare(handler)
