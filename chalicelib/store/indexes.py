"""Secondary indexes, declared in one line each: the name DynamoDB knows, the key attributes, the
projection.

PynamoDB wants a class per index (its Meta and its key attributes), and every table wrote the same
eight lines for each. These build that class; the generated CloudFormation, the provisioning and
the IAM policy read the indexes from the models as before (`Model._get_schema()`).

Declare one on its model with the model's type, so queries on it are typed:
`by_organization: GlobalSecondaryIndex[HeartbeatRecord] = global_index("organization-index",
"organization_id", "heartbeat_id")`.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pynamodb.attributes import Attribute, UnicodeAttribute
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex, Index, KeysOnlyProjection, LocalSecondaryIndex
from pynamodb.models import Model

M = TypeVar("M", bound=Model)
IndexT = TypeVar("IndexT", bound=Index[Any])


def global_index(
    index_name: str,
    hash_key: str,
    range_key: str | None = None,
    *,
    range_type: type[Attribute[Any]] = UnicodeAttribute,
    keys_only: bool = False,
) -> GlobalSecondaryIndex[M]:
    """A global index on `hash_key` (a string) and `range_key` (a `range_type`); projecting every
    attribute, or only the keys (`keys_only`: a sparse index that finds what is due, then reads it)."""
    return _index_class(GlobalSecondaryIndex, index_name, hash_key, range_key, range_type, keys_only)()


def local_index(index_name: str, hash_key: str, range_key: str) -> LocalSecondaryIndex[M]:
    """A local index (the table's hash key, another string range key), projecting every attribute."""
    return _index_class(LocalSecondaryIndex, index_name, hash_key, range_key, UnicodeAttribute, keys_only=False)()


def _index_class(
    base: type[IndexT],
    index_name: str,
    hash_key: str,
    range_key: str | None,
    range_type: type[Attribute[Any]],
    keys_only: bool,
) -> type[IndexT]:
    # A new Meta per index: PynamoDB writes the index's attributes (and its model) onto it.
    meta = type(
        "Meta", (), {"index_name": index_name, "projection": KeysOnlyProjection() if keys_only else AllProjection()}
    )
    namespace: dict[str, Any] = {"Meta": meta, hash_key: UnicodeAttribute(hash_key=True)}
    if range_key is not None:
        namespace[range_key] = range_type(range_key=True)
    name = "".join(part.title() for part in index_name.split("-"))
    return type(name, (base,), namespace)
