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
import threading
from collections.abc import Callable, Iterable
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import run_simple

_dynamodb_lock = threading.Lock()


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
    arguments = parser.parse_args()
    from chalicelib.local.emulator import die_with_parent

    die_with_parent()
    application = serialize_dynamodb(DomainDispatcherApplication(create_backend_app))
    run_simple("127.0.0.1", arguments.port, application, threaded=True, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main()
