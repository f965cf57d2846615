"""`tocsin`: a client of Tocsin's public API (docs/CONFIG.md).

    tocsin --url https://tocsin.example --key tk_... config export > tocsin.yaml
    tocsin config plan -f tocsin.yaml          # TOCSIN_URL and TOCSIN_API_KEY from the environment
    tocsin config apply -f tocsin.yaml --prune

Exit status: 0 done, 1 a failure (one clear message on standard error), 2 a usage error (or, for
`config plan --detailed-exitcode`, changes pending). Progress goes to standard error, results to
standard output.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TextIO

from chalicelib.client.http import Api, ApiError, ClientError, Transport, connect

EXIT_FAILURE = 1
EXIT_USAGE = 2
# Each module adds its commands with `register(subparsers)`; the importers add theirs here.
COMMAND_MODULES: tuple[str, ...] = ("chalicelib.client.config_cli", "chalicelib.client.importers.command")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tocsin", description="A client of Tocsin's public API.")
    parser.add_argument("--url", help="the Tocsin service root, e.g. https://tocsin.example (env TOCSIN_URL)")
    parser.add_argument("--key", help="an API key (env TOCSIN_API_KEY)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands)
    return parser


def _connector(environ: dict[str, str], transport: Transport | None):  # type: ignore[no-untyped-def]
    def connect_from(args: argparse.Namespace) -> Api:
        url = args.url or environ.get("TOCSIN_URL")
        key = args.key or environ.get("TOCSIN_API_KEY")
        if not url:
            raise UsageError("tocsin: no service URL: give --url or set TOCSIN_URL")
        if not key:
            raise UsageError("tocsin: no API key: give --key or set TOCSIN_API_KEY")
        return connect(url, key, transport)

    return connect_from


def run(
    argv: Sequence[str],
    *,
    out: TextIO,
    err: TextIO,
    stdin: TextIO,
    environ: dict[str, str],
    transport: Transport | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> int:
    try:
        args = build_parser().parse_args(list(argv))
        args.now = clock()  # one instant for the whole run: what "over", "ended", "started" mean
        args.environ = environ  # where secrets named by the document are read
        return int(args.handler(args, _connector(environ, transport), out, err, stdin))
    except UsageError as error:
        err.write(f"{error}\n")
        return EXIT_USAGE
    except ApiError as error:
        if error.unauthorized:
            refused = f"{error.status} {error.code or 'error'}"
            err.write(f"tocsin: the API key was refused ({refused}): check --key or TOCSIN_API_KEY\n")
        elif error.status == 403:
            err.write(f"tocsin: the API key lacks a scope this needs: {error}\n")
        else:
            err.write(f"tocsin: {error}\n")
        return EXIT_FAILURE
    except ClientError as error:
        err.write(f"tocsin: {error}\n")
        return EXIT_FAILURE
    except KeyboardInterrupt:
        err.write("tocsin: interrupted; run the same command again to finish\n")
        return EXIT_FAILURE


def main(argv: Sequence[str] | None = None) -> int:
    return run(
        sys.argv[1:] if argv is None else argv,
        out=sys.stdout,
        err=sys.stderr,
        stdin=sys.stdin,
        environ=dict(os.environ),
    )
