"""`tocsin config export | plan | apply | validate | schema` (docs/CONFIG.md).

The importers share this path: they build a Document and call `plan_document` and
`apply_plan`, so an import and a configuration apply are one reconciler."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import datetime
from typing import Any, TextIO

from chalicelib.client import document as doc
from chalicelib.client import render, validate, yamlio
from chalicelib.client.http import Api, ClientError
from chalicelib.client.planner import Plan, plan
from chalicelib.client.reconcile import Applier, Outcome
from chalicelib.client.state import Current, Reader

EXIT_OK = 0
EXIT_CHANGES_PENDING = 2  # plan --detailed-exitcode, as terraform does

Connect = Callable[[argparse.Namespace], Api]


def _progress(err: TextIO) -> Callable[[str], None]:
    def say(message: str) -> None:
        err.write(message + "\n")
        err.flush()

    return say


# --- the shared path ---------------------------------------------------------------------------------


def read_current(api: Api, *, now: datetime, progress: Callable[[str], None] | None = None) -> Current:
    return Reader(api, now, progress or (lambda _: None)).read()


def plan_document(
    document: doc.Document,
    current: Current,
    *,
    now: datetime,
    prune: bool = False,
    loaded: yamlio.Loaded | None = None,
    filename: str | None = None,
) -> Plan:
    """The plan for `document` against the organization; InvalidDocument when a reference names
    nothing in the document or the organization (with its line when read from a file)."""
    problems = validate.check_document(document, known=current.known)
    if problems:
        raise validate.InvalidDocument([validate.with_line(p, loaded) for p in problems], filename)
    return plan(document, current.document, now=now, prune=prune, sources=current.sources)


def apply_plan(
    api: Api,
    current: Current,
    planned: Plan,
    *,
    now: datetime,
    prune: bool = False,
    progress: Callable[[str], None] | None = None,
    environ: dict[str, str] | None = None,
) -> Outcome:
    applier = Applier(api, current, now=now, prune=prune, environ=environ, progress=progress or (lambda _: None))
    return applier.apply(planned)


def missing_secrets(planned: Plan, environ: dict[str, str]) -> None:
    """Refuses, before any change, an apply that would need a secret the environment lacks."""
    for action in planned.changes:
        item = action.desired
        secret = item.client_secret_env if isinstance(item, doc.Integration) else None
        if action.op == "create" and secret and not environ.get(secret):
            raise ClientError(
                f"integration {action.label!r} needs the environment variable {secret} "
                "(its client secret), which is not set; nothing was changed"
            )


# --- the commands ------------------------------------------------------------------------------------


def _read_file(name: str, stdin: TextIO) -> str:
    if name == "-":
        return stdin.read()
    try:
        with open(name, encoding="utf-8") as handle:
            return handle.read()
    except OSError as error:
        raise ClientError(f"cannot read {name}: {error.strerror}") from None


def _parsed(args: argparse.Namespace, stdin: TextIO) -> tuple[doc.Document, yamlio.Loaded, str]:
    filename = "<stdin>" if args.file == "-" else args.file
    document, loaded = validate.parse(_read_file(args.file, stdin), filename)
    return document, loaded, filename


def export_document(current: Current) -> str:
    """The organization as YAML: defaults left out, every section present, no secrets."""
    data = current.document.model_dump(mode="json", exclude_defaults=True, by_alias=True)
    body: dict[str, Any] = {"version": 1}
    for section, _ in doc.SECTIONS:
        # Each object's source after its own fields: what it is first, where it came from last.
        body[section] = [
            {
                **{k: v for k, v in item.items() if k != "source"},
                **({"source": item["source"]} if "source" in item else {}),
            }
            for item in data.get(section, [])
        ]
    return yamlio.dump(body)


def cmd_export(args: argparse.Namespace, connect: Connect, out: TextIO, err: TextIO, stdin: TextIO) -> int:
    current = read_current(connect(args), now=args.now, progress=_progress(err))
    for warning in current.warnings:
        err.write(f"warning: {warning}\n")
    text = export_document(current)
    if args.output and args.output != "-":
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        out.write(text)
    return EXIT_OK


def cmd_plan(args: argparse.Namespace, connect: Connect, out: TextIO, err: TextIO, stdin: TextIO) -> int:
    document, loaded, filename = _parsed(args, stdin)
    now: datetime = args.now
    current = read_current(connect(args), now=now, progress=_progress(err))
    planned = plan_document(document, current, now=now, prune=args.prune, loaded=loaded, filename=filename)
    for warning in current.warnings:
        err.write(f"warning: {warning}\n")
    if args.json:
        out.write(render.as_json(planned, organization=current.organization))
    else:
        out.write(render.text(planned, organization=current.organization, prune=args.prune))
    return EXIT_CHANGES_PENDING if args.detailed_exitcode and planned.changes else EXIT_OK


def cmd_apply(args: argparse.Namespace, connect: Connect, out: TextIO, err: TextIO, stdin: TextIO) -> int:
    document, loaded, filename = _parsed(args, stdin)
    now: datetime = args.now
    api = connect(args)
    progress = _progress(err)
    current = read_current(api, now=now, progress=progress)
    planned = plan_document(document, current, now=now, prune=args.prune, loaded=loaded, filename=filename)
    for warning in current.warnings:
        err.write(f"warning: {warning}\n")
    out.write(render.text(planned, organization=current.organization, prune=args.prune))
    if planned.changes:
        missing_secrets(planned, args.environ)
        outcome = apply_plan(api, current, planned, now=now, prune=args.prune, progress=progress, environ=args.environ)
        out.write(render.outcome_text(outcome))
    return EXIT_OK


def cmd_validate(args: argparse.Namespace, connect: Connect, out: TextIO, err: TextIO, stdin: TextIO) -> int:
    document, _, filename = _parsed(args, stdin)
    count = sum(len(document.section(section) or []) for section, _ in doc.SECTIONS)
    out.write(f"{filename}: valid ({count} objects)\n")
    return EXIT_OK


def cmd_schema(args: argparse.Namespace, connect: Connect, out: TextIO, err: TextIO, stdin: TextIO) -> int:
    out.write(doc.schema_text())
    return EXIT_OK


def register(commands: Any) -> None:
    """Adds `config` and its subcommands to the `tocsin` parser."""
    config = commands.add_parser("config", help="configuration as code: export, plan, apply")
    sub = config.add_subparsers(dest="config_command", metavar="COMMAND", required=True)

    export = sub.add_parser("export", help="print the organization's setup as a YAML document")
    export.add_argument("-o", "--output", help="write to this file instead of standard output")
    export.set_defaults(handler=cmd_export, needs_api=True)

    for name, handler, about in (
        ("plan", cmd_plan, "show what apply would change (changes nothing)"),
        ("apply", cmd_apply, "make the organization match the document"),
    ):
        command = sub.add_parser(name, help=about)
        command.add_argument("-f", "--file", required=True, help="the document (YAML); - reads standard input")
        command.add_argument(
            "--prune", action="store_true", help="also delete what the document's sections do not name"
        )
        if name == "plan":
            command.add_argument("--json", action="store_true", help="print the plan as JSON")
            command.add_argument(
                "--detailed-exitcode", action="store_true", help="exit 2 when changes are pending (0: none)"
            )
        command.set_defaults(handler=handler, needs_api=True)

    check = sub.add_parser("validate", help="check a document offline (schema, keys, references)")
    check.add_argument("-f", "--file", required=True, help="the document (YAML); - reads standard input")
    check.set_defaults(handler=cmd_validate, needs_api=False)

    schema = sub.add_parser("schema", help="print the document's JSON Schema")
    schema.set_defaults(handler=cmd_schema, needs_api=False)
