"""The emulator answers a Query on a table's own key from that key's partition, not the whole table.

moto 5 answers every Query by listing and sorting every item of the table (`Table.all_items`), then
keeping the queried partition's: one Query's cost grew with the table (20,000 items: 0.8 s on a
busy machine), so the local outbox, 50 messages read from a table of tens of thousands, slowed as
the stack sent more. For a Query without an index the items moto keeps are exactly that
partition's, which its table holds apart already: they are handed to moto instead, and moto sorts,
pages, filters and projects them as before. Index Queries still walk the table.

Applied by the emulator process (chalicelib/local/moto_server.py) and the test suite's in-process
moto (tests/emulator.py). Safe because both serialize DynamoDB requests: the partition is lent to
one Query at a time.
"""

from __future__ import annotations

from typing import Any

_INDEX_NAME_POSITION = (
    6  # Table.query(hash_key, range_comparison, range_objs, limit, start, forward, projection, index_name, ...)
)


def query_partitions_only() -> None:
    """Idempotent."""
    from moto.dynamodb.models.table import Table

    if getattr(Table.query, "tocsin_partitioned", False):
        return
    original = Table.query

    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = args[_INDEX_NAME_POSITION] if len(args) > _INDEX_NAME_POSITION else kwargs.get("index_name")
        if index_name or hash_key is None:
            return original(self, hash_key, *args, **kwargs)
        found = self.items.get(hash_key)  # not [hash_key]: that would add an empty partition
        if found is None:
            partition = []
        elif self.range_key_attr:
            partition = list(found.values())
        else:
            partition = [found]
        self.all_items = lambda: partition  # this Query's view of the table: the partition it names
        try:
            return original(self, hash_key, *args, **kwargs)
        finally:
            del self.all_items

    query.tocsin_partitioned = True  # type: ignore[attr-defined]
    Table.query = query  # type: ignore[method-assign]
