"""chalicelib.store.indexes: an index declared in one line is the index PynamoDB would build from
a class (its name, keys, key types, projection), on a model that is never provisioned here."""

from __future__ import annotations

from pynamodb.attributes import UnicodeAttribute, UTCDateTimeAttribute
from pynamodb.indexes import GlobalSecondaryIndex, LocalSecondaryIndex
from pynamodb.models import Model

from chalicelib.store.indexes import global_index, local_index


class Sample(Model):
    class Meta:
        table_name = "samples"

    organization_id = UnicodeAttribute(hash_key=True)
    sample_id = UnicodeAttribute(range_key=True)
    due_shard = UnicodeAttribute(null=True)
    due_at = UTCDateTimeAttribute(null=True)
    ref = UnicodeAttribute()

    by_ref: GlobalSecondaryIndex[Sample] = global_index("ref-index", "ref")
    by_due_time: GlobalSecondaryIndex[Sample] = global_index(
        "due-index", "due_shard", "due_at", range_type=UTCDateTimeAttribute, keys_only=True
    )
    by_sample: LocalSecondaryIndex[Sample] = local_index("sample-index", "organization_id", "ref")


def test_indexes_declared_in_a_line_have_their_names_keys_and_projections() -> None:
    schema = Sample._get_schema()
    indexes = {index["index_name"]: index for index in schema["global_secondary_indexes"]}
    assert indexes["ref-index"]["key_schema"] == [{"AttributeName": "ref", "KeyType": "HASH"}]
    assert indexes["ref-index"]["projection"] == {"ProjectionType": "ALL"}
    assert sorted(indexes["due-index"]["key_schema"], key=lambda key: key["KeyType"]) == [
        {"AttributeName": "due_shard", "KeyType": "HASH"},
        {"AttributeName": "due_at", "KeyType": "RANGE"},
    ]
    assert indexes["due-index"]["projection"] == {"ProjectionType": "KEYS_ONLY"}
    (local,) = schema["local_secondary_indexes"]
    assert (local["index_name"], local["projection"]) == ("sample-index", {"ProjectionType": "ALL"})
    types = {d["AttributeName"]: d["AttributeType"] for d in schema["attribute_definitions"]}
    assert types == {"organization_id": "S", "sample_id": "S", "ref": "S", "due_shard": "S", "due_at": "S"}


def test_each_index_has_its_own_class_and_meta() -> None:
    # PynamoDB writes the index's model and attributes onto its Meta: two indexes must never share one.
    assert Sample.by_ref.Meta is not Sample.by_due_time.Meta
    assert Sample.by_ref._model is Sample
    assert set(Sample.by_due_time.Meta.attributes) == {"due_shard", "due_at"}
