"""Tables, queues and functions as the code defines them, in one neutral shape.

Tables come from the PynamoDB models (through `Model._get_schema()`, the description
PynamoDB's own `create_table` uses, so the local stack and AWS read the same thing); queues from
`workers.messages` (QUEUES and the redrive settings local provisioning uses too); functions from the
Chalice app, named as `chalice package` names them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pynamodb.attributes import TTLAttribute
from pynamodb.models import Model

HASH, RANGE = "HASH", "RANGE"
API_HANDLER = "APIHandler"  # the logical id `chalice package` gives the function serving every route


@dataclass(frozen=True)
class IndexDef:
    name: str
    key_schema: tuple[tuple[str, str], ...]  # ((attribute, HASH|RANGE), ...), hash first
    projection: dict[str, Any]


@dataclass(frozen=True)
class TableDef:
    short_name: str
    model_name: str
    key_schema: tuple[tuple[str, str], ...]
    attribute_types: dict[str, str]  # every key attribute of the table and its indexes: S | N | B
    global_indexes: tuple[IndexDef, ...]
    local_indexes: tuple[IndexDef, ...]
    ttl_attribute: str | None
    billing_mode: str
    shared_by: tuple[str, ...] = ()  # models stored in this table without provisioning it

    @property
    def logical_id(self) -> str:
        return camel(self.short_name) + "Table"

    @property
    def indexes(self) -> tuple[IndexDef, ...]:
        return self.global_indexes + self.local_indexes


@dataclass(frozen=True)
class QueueDef:
    short_name: str
    dead_letter_short_name: str
    max_receive_count: int

    @property
    def logical_id(self) -> str:
        return camel(self.short_name) + "Queue"

    @property
    def dead_letter_logical_id(self) -> str:
        return camel(self.short_name) + "DeadLetterQueue"


@dataclass(frozen=True)
class FunctionDef:
    logical_id: str  # as `chalice package` names the AWS::Serverless::Function
    handler: str
    sqs_queue: str | None = None  # short name of the queue an SQS handler consumes
    event_logical_id: str | None = None
    batch_size: int | None = None


def camel(name: str) -> str:
    """`api-keys` -> `ApiKeys`, the way Chalice turns names into CloudFormation logical ids."""
    from chalice.utils import to_cfn_resource_name

    return to_cfn_resource_name(name)


def _ordered_keys(key_schema: Any) -> tuple[tuple[str, str], ...]:
    pairs = [(k["AttributeName"], k["KeyType"]) for k in key_schema]
    return tuple(sorted(pairs, key=lambda pair: pair[1] != HASH))


def _index(raw: Any) -> IndexDef:
    return IndexDef(
        name=str(raw["index_name"]), key_schema=_ordered_keys(raw["key_schema"]), projection=dict(raw["projection"])
    )


def _ttl_attribute(model: type[Model]) -> str | None:
    names = [attr.attr_name for attr in model.get_attributes().values() if isinstance(attr, TTLAttribute)]
    if len(names) > 1:
        raise ValueError(f"{model.__name__} has more than one TTLAttribute; DynamoDB allows one")
    return names[0] if names else None


def short_name(model: type[Model]) -> str:
    meta = model.Meta
    return str(getattr(meta, "short_name", meta.table_name))


def table_definitions() -> list[TableDef]:
    """One entry per provisioned table, sorted by short name; shared tables list their guests."""
    from chalicelib.table_registry import all_models

    models = all_models()
    owners = {m.__name__: m for m in models if not getattr(m.Meta, "provisioned_by", None)}
    guests: dict[str, list[str]] = {}
    for model in models:
        owner = getattr(model.Meta, "provisioned_by", None)
        if owner:
            if owner not in owners:
                raise ValueError(f"{model.__name__}.Meta.provisioned_by names {owner!r}, which is not a table owner")
            if short_name(owners[owner]) != short_name(model):
                raise ValueError(f"{model.__name__} shares {owner}'s table but names another table")
            guests.setdefault(owner, []).append(model.__name__)
    tables = []
    for name, model in owners.items():
        schema = model._get_schema()
        attribute_types = {a["AttributeName"]: a["AttributeType"] for a in schema["attribute_definitions"]}
        for index in [*schema["global_secondary_indexes"], *schema["local_secondary_indexes"]]:
            attribute_types.update({a["AttributeName"]: a["AttributeType"] for a in index["attribute_definitions"]})
        tables.append(
            TableDef(
                short_name=short_name(model),
                model_name=name,
                key_schema=_ordered_keys(schema["key_schema"]),
                attribute_types=dict(sorted(attribute_types.items())),
                global_indexes=tuple(sorted((_index(i) for i in schema["global_secondary_indexes"]), key=_by_name)),
                local_indexes=tuple(sorted((_index(i) for i in schema["local_secondary_indexes"]), key=_by_name)),
                ttl_attribute=_ttl_attribute(model),
                billing_mode=str(getattr(model.Meta, "billing_mode", "PROVISIONED")),
                shared_by=tuple(sorted(guests.get(name, []))),
            )
        )
    short_names = [t.short_name for t in tables]
    if len(set(short_names)) != len(short_names):
        raise ValueError(f"two models provision the same table: {sorted(short_names)}")
    return sorted(tables, key=lambda t: t.short_name)


def _by_name(index: IndexDef) -> str:
    return index.name


def queue_definitions() -> list[QueueDef]:
    from chalicelib.queue.messages import DLQ_SUFFIX, MAX_RECEIVE_COUNT, QUEUES

    return [QueueDef(q, q + DLQ_SUFFIX, MAX_RECEIVE_COUNT) for q in QUEUES]


def function_definitions() -> list[FunctionDef]:
    """The Lambda functions `chalice package` emits for app.py, with Chalice's logical ids."""
    from chalice.app import ScheduledEventConfig, SQSEventConfig

    from app import app
    from chalicelib.queue.messages import short_queue_name

    functions = [FunctionDef(API_HANDLER, "app.app")] if app.routes else []
    known_queues = {q.short_name for q in queue_definitions()}
    for source in app.event_sources:
        if isinstance(source, ScheduledEventConfig):
            # Chalice emits the function and its Schedule event; the template only patches its environment.
            functions.append(FunctionDef(logical_id=camel(source.name), handler=source.handler_string))
            continue
        if not isinstance(source, SQSEventConfig):
            raise NotImplementedError(
                f"{type(source).__name__} ({source.name}): teach chalicelib.deploy about this event source"
            )
        if source.queue_arn is not None:
            raise NotImplementedError(f"{source.name}: queue_arn event sources are not part of this stack")
        queue = short_queue_name(source.queue)
        if queue not in known_queues:
            raise ValueError(
                f"{source.name} consumes {source.queue!r}, which is not tocsin-<a queue in workers.messages.QUEUES>"
            )
        logical_id = camel(source.name)
        functions.append(
            FunctionDef(
                logical_id=logical_id,
                handler=source.handler_string,
                sqs_queue=queue,
                event_logical_id=logical_id + "SqsEventSource",
                batch_size=source.batch_size,
            )
        )
    if app.pure_lambda_functions or app.builtin_auth_handlers or app.websocket_handlers:
        raise NotImplementedError("pure Lambdas, authorizers, websockets: teach chalicelib.deploy about them")
    return functions
