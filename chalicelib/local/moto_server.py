"""moto in server mode, with DynamoDB requests serialized.

moto's TransactWriteItems deep-copies every table for its rollback; a concurrent write in
another thread breaks that copy ("dictionary changed size during iteration") and racing
conditional writes could interleave. Real DynamoDB applies each request atomically, so
serializing DynamoDB requests here is closer to the real service. Other services (SQS,
SNS, SES) stay concurrent: SNS's synchronous HTTP delivery calls back into our API,
which must be able to reach DynamoDB meanwhile.
"""

from __future__ import annotations

import argparse
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server, run_simple

_dynamodb_lock = threading.Lock()


def cheaper_transactions() -> None:
    """moto backs up every table a TransactWriteItems touches with a deep copy, so each incident
    write cost grew with the whole incidents table. Back up only the items the transaction
    names instead, and restore those on failure: the same all-or-nothing result, at a cost
    that follows the transaction. Safe because DynamoDB requests are serialized here."""
    import copy
    import types

    import moto.dynamodb.models as dynamodb_models
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.table import Table

    original = dynamodb_models.DynamoDBBackend.transact_write_items
    real_copy = copy

    def no_table_copy(value: Any, memo: Any = None) -> Any:
        return value if isinstance(value, Table) else real_copy.deepcopy(value, memo)

    shim = types.SimpleNamespace(deepcopy=no_table_copy, copy=real_copy.copy)

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        backups = []
        for entry in transact_items:
            _, operation = next(iter(entry.items()))
            table = self.tables.get(operation.get("TableName"))
            if table is None:
                continue
            key = operation.get("Key") or operation.get("Item") or {}
            if table.hash_key_attr not in key:
                continue
            hash_value = DynamoType(key[table.hash_key_attr])
            range_value = DynamoType(key[table.range_key_attr]) if table.range_key_attr in key else None
            if table.has_range_key and range_value is None:
                continue
            backups.append(
                (table, hash_value, range_value, real_copy.deepcopy(table.get_item(hash_value, range_value)))
            )
        dynamodb_models.copy = shim  # type: ignore[attr-defined,assignment]
        try:
            original(self, transact_items)
        except Exception:
            for table, hash_value, range_value, item in reversed(backups):
                _restore(table, hash_value, range_value, item)
            raise
        finally:
            dynamodb_models.copy = real_copy  # type: ignore[attr-defined]

    dynamodb_models.DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]


def _restore(table: Any, hash_value: Any, range_value: Any, item: Any) -> None:
    if range_value is not None:
        if item is None:
            table.items.get(hash_value, {}).pop(range_value, None)
        else:
            table.items[hash_value][range_value] = item
    elif item is None:
        table.items.pop(hash_value, None)
    else:
        table.items[hash_value] = item


def serialize_dynamodb(app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    def wrapped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if str(environ.get("HTTP_X_AMZ_TARGET", "")).startswith("DynamoDB"):
            with _dynamodb_lock:
                return list(app(environ, start_response))
        return app(environ, start_response)

    return wrapped


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--fd", type=int, default=None, help="a socket the parent bound and listens on")
    arguments = parser.parse_args()
    from chalicelib.local.emulator import die_with_parent

    die_with_parent()
    # werkzeug formats a log line per request even when nobody reads it (~13% of the emulator's CPU).
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    cheaper_transactions()
    application = serialize_dynamodb(DomainDispatcherApplication(create_backend_app))
    if arguments.fd is None:
        run_simple("127.0.0.1", arguments.port, application, threaded=True, request_handler=MotoRequestHandler)
        return
    # The parent's socket: the port was ours from the moment it was chosen, so nothing else can take it.
    server = make_server(
        "127.0.0.1", arguments.port, application, threaded=True, request_handler=MotoRequestHandler, fd=arguments.fd
    )
    server.serve_forever()


if __name__ == "__main__":
    main()
