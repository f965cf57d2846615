"""moto in server mode, with DynamoDB requests serialized, and (with --state-dir) its data kept.

moto's TransactWriteItems deep-copies every table for its rollback; a concurrent write in
another thread breaks that copy ("dictionary changed size during iteration") and racing
conditional writes could interleave. Real DynamoDB applies each request atomically, so
serializing DynamoDB requests here is closer to the real service. SQS and SES requests take a
second lock only so a snapshot sees one moment (chalicelib/local/persistence.py); SNS stays
unlocked: its synchronous HTTP delivery calls back into our API, which must be able to reach
DynamoDB and SQS meanwhile.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server

from chalicelib.local.moto_expressions import cheaper_update_expressions
from chalicelib.local.moto_partitions import query_partitions_only
from chalicelib.local.moto_responses import cached_action_names, cached_backend_names, plain_item_results
from chalicelib.local.moto_sqs import cheaper_sqs_polls
from chalicelib.local.persistence import DYNAMODB_READS, SQS_READS, SnapshotUnreadable, StateStore

_dynamodb_lock = threading.Lock()
_other_lock = threading.Lock()
_holding = threading.local()  # whether this request thread holds _other_lock


def cheaper_moto() -> None:
    """Every change that makes moto cheaper per request without changing what it answers. The
    emulator process and the test suite's in-process moto (tests/emulator.py) apply this one list,
    so the tests exercise what the local stack runs."""
    cheaper_transactions()
    query_partitions_only()  # a Query reads its partition only
    plain_item_results()  # item answers written as plain JSON
    cached_action_names()
    cheaper_sqs_polls()  # SQS reads the clock once per look at a queue
    cheaper_update_expressions()  # an update expression is parsed once per text


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
    return serialize(app, None)


def serialize(app: Callable[..., Iterable[bytes]], store: StateStore | None) -> Callable[..., Iterable[bytes]]:
    """DynamoDB requests one at a time under one lock, everything else under the other (SQS's long
    poll lets go of it while it waits); with a store, DynamoDB writes are journalled and every
    change is counted, so snapshots see one consistent moment (chalicelib/local/persistence.py)."""

    def wrapped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
        if target.startswith("DynamoDB"):
            return _dynamodb_request(app, store, environ, start_response, target.rpartition(".")[2])
        internal = str(environ.get("PATH_INFO", "")).startswith("/moto-api")
        if store is None or not (internal or target.startswith("AmazonSQS.") or _signing_service(environ) == "ses"):
            # SNS and the rest run unlocked and unsaved: SNS's HTTP delivery calls our API, which
            # calls SQS and DynamoDB before SNS's request can finish.
            return app(environ, start_response)
        method = environ.get("REQUEST_METHOD", "GET")
        with contextlib.ExitStack() as held:
            if internal:  # a reset touches every service
                held.enter_context(_dynamodb_lock)
            held.enter_context(_other_lock)
            _holding.other = True
            try:
                body = b"".join(app(environ, start_response))
            finally:
                _holding.other = False
            if target.startswith("AmazonSQS."):
                action = target.rpartition(".")[2]
                changed = action not in SQS_READS and (action != "ReceiveMessage" or b'"Messages"' in body)
            else:
                changed = method != "GET"
            if changed:
                store.changes += 1
            return [body]

    return wrapped


def _signing_service(environ: dict[str, Any]) -> str:
    """The service in a SigV4 credential scope (`Credential=key/date/region/service/aws4_request`)."""
    scope = str(environ.get("HTTP_AUTHORIZATION", "")).split(",")[0].rpartition("Credential=")[2]
    parts = scope.split("/")
    return parts[3] if len(parts) == 5 else ""


def _dynamodb_request(
    app: Callable[..., Iterable[bytes]],
    store: StateStore | None,
    environ: dict[str, Any],
    start_response: Callable[..., Any],
    operation: str,
) -> Iterable[bytes]:
    if store is None or operation in DYNAMODB_READS:
        with _dynamodb_lock:
            return list(app(environ, start_response))
    length = int(environ.get("CONTENT_LENGTH") or 0)
    request_body = environ["wsgi.input"].read(length) if length else b""
    environ["wsgi.input"] = io.BytesIO(request_body)
    statuses: list[str] = []

    def remember_status(status: str, headers: Any, *rest: Any) -> Any:
        statuses.append(status)
        return start_response(status, headers, *rest)

    with _dynamodb_lock:
        response = list(app(environ, remember_status))
        if statuses and statuses[0].startswith("200"):
            store.changes += 1
            store.record_write({name: str(environ.get(key, "")) for name, key in _JOURNALLED_HEADERS}, request_body)
    return response


# What moto needs to route a replayed request to the same backend and operation.
_JOURNALLED_HEADERS = (
    ("X-Amz-Target", "HTTP_X_AMZ_TARGET"),
    ("Authorization", "HTTP_AUTHORIZATION"),
    ("Content-Type", "CONTENT_TYPE"),
)


def replayer(app: Callable[..., Iterable[bytes]]) -> Callable[[dict[str, str], bytes], None]:
    """Feed one journalled request to moto in-process, exactly as it first arrived."""
    from werkzeug.test import EnvironBuilder

    def replay(headers: dict[str, str], body: bytes) -> None:
        environ = EnvironBuilder(method="POST", path="/", data=body, headers=list(headers.items())).get_environ()
        for _ in app(environ, lambda *args: None):
            pass

    return replay


class KeepAliveRequestHandler(MotoRequestHandler):
    """moto's request handler, keeping the connection open between requests.

    werkzeug's development server answers every request with `Connection: close` (http.server
    cannot drain a body the application left unread), then waits 10 ms for stray request bytes.
    So each call from a client (the API, the workers) cost a new TCP connection, a new server
    thread and that wait: about 15% of the emulator's and the API process's CPU in the contract
    sweep. Here the body is read whole before moto sees it, so the stream is always at the next
    request, and the answer (moto's are never streamed) goes out with its length: the connection
    stays open, as AWS endpoints keep it. A chunked request body closes it afterwards."""

    # Without this a kept-alive client waited ~40 ms for each answer (Nagle's algorithm against the
    # client's delayed ACK) when headers and body were two writes; they are one now, and small
    # answers still go out at once.
    disable_nagle_algorithm = True

    def run_wsgi(self) -> None:
        environ = self.make_environ()
        if "HTTP_TRANSFER_ENCODING" in environ:
            self.close_connection = True
        else:
            length = int(environ.get("CONTENT_LENGTH") or 0)
            environ["wsgi.input"] = io.BytesIO(self.rfile.read(length) if length > 0 else b"")
        started: list[Any] = []
        written: list[bytes] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[..., Any]:
            started[:] = [status, headers]
            return written.append

        try:
            answer = self.server.app(environ, start_response)
            try:
                written.extend(answer)
            finally:
                close = getattr(answer, "close", None)
                if close is not None:
                    close()
        except Exception:
            logging.getLogger("tocsin.emulator").exception("emulator request failed")
            started[:] = ["500 INTERNAL SERVER ERROR", [("Content-Type", "text/plain")]]
            written[:] = [b"emulator error"]
            self.close_connection = True
        body = b"".join(written)
        status, headers = started
        code, _, reason = str(status).partition(" ")
        self.send_response(int(code), reason)
        for name, value in headers:
            if name.lower() not in _FRAMING_HEADERS:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        # Headers and body in one write: each write lets go of the GIL and waits to take it back
        # from the other request threads (a third of the emulator's busy samples were that wait).
        self._headers_buffer.append(b"\r\n")
        if self.command != "HEAD":
            self._headers_buffer.append(body)
        self.flush_headers()


# Set by the handler itself from the body it sends.
_FRAMING_HEADERS = frozenset({"content-length", "transfer-encoding", "connection", "server", "date"})


def release_lock_while_polling() -> None:
    """SQS long polls wait inside moto's ReceiveMessage: let the other requests run meanwhile."""
    from moto.sqs.models import Queue

    original = Queue.wait_for_messages

    def wait_for_messages(self: Any, timeout: int) -> None:
        if not getattr(_holding, "other", False):
            original(self, timeout)
            return
        _other_lock.release()
        try:
            original(self, timeout)
        finally:
            _other_lock.acquire()

    Queue.wait_for_messages = wait_for_messages  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--fd", type=int, default=None, help="a socket the parent bound and listens on")
    parser.add_argument("--state-dir", type=Path, default=None, help="keep the state here across restarts")
    arguments = parser.parse_args()
    from chalicelib.local.emulator import die_with_parent

    die_with_parent()
    # werkzeug formats a log line per request even when nobody reads it (~13% of the emulator's CPU).
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    cheaper_moto()
    cached_backend_names()  # the server's own dispatch: not on the in-process path
    backends = DomainDispatcherApplication(create_backend_app)
    store = None
    if arguments.state_dir is not None:
        release_lock_while_polling()
        store = StateStore(arguments.state_dir, (_dynamodb_lock, _other_lock))
        try:
            restored = store.restore(replayer(backends))
        except SnapshotUnreadable as error:
            print(f"{error}\nStart empty with `make run FRESH=1` (or remove that directory).", file=sys.stderr)
            sys.exit(3)
        print(
            f"state: snapshot={'yes' if restored.snapshot else 'no'} "
            f"journal_writes={restored.replayed_writes} seconds={restored.seconds:.2f}",
            file=sys.stderr,
            flush=True,
        )
    application = serialize(backends, store)
    # With --fd, the parent's socket: the port was ours from the moment it was chosen.
    server = make_server(
        "127.0.0.1",
        arguments.port,
        application,
        threaded=True,
        request_handler=KeepAliveRequestHandler,
        fd=arguments.fd,
    )
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    threading.Thread(target=server.serve_forever, name="emulator-http", daemon=True).start()
    if store is not None:
        threading.Thread(target=store.run, args=(stop,), name="emulator-snapshots", daemon=True).start()
    stop.wait()
    server.shutdown()  # no new request from here on: the last snapshot is the final state
    if store is not None:
        store.close()
        print(f"state: saved on stop in {store.last_snapshot_seconds:.2f}s", file=sys.stderr, flush=True)
    # Everything is on disk: skip interpreter finalization, which can wait on request threads
    # still inside moto (an SQS long poll) and hold up the stop of `make run`.
    os._exit(0)


if __name__ == "__main__":
    main()
