"""`tocsin import opsgenie|pagerduty --plan|--apply` (docs/MIGRATING.md).

Both read the vendor's account, translate it into the configuration document, and hand it to
the one reconciler (chalicelib.client.config_cli): `--plan` changes nothing and shows, object by
object, what an apply would create, update or skip and why; `--apply` makes the changes and
prints the cut-over sheet. An import never deletes. A second run finds every object again (by
the vendor id recorded in Tocsin's import ledger, else by name) and changes nothing; a run that
stopped part-way is finished by running it again."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import datetime
from typing import Any, TextIO

from chalicelib.client import config_cli
from chalicelib.client.http import Api, ApiError
from chalicelib.client.importers import (
    cutover,
    opsgenie_translate,
    pagerduty_reader,
    pagerduty_translate,
    report,
    verify,
)
from chalicelib.client.importers.context import Context, Existing, Translation
from chalicelib.client.importers.opsgenie_reader import OpsgenieReader
from chalicelib.client.importers.vendor_http import VendorError, opsgenie_client
from chalicelib.client.main import UsageError

EXIT_OK, EXIT_FAILURE = 0, 1
Connect = Callable[[argparse.Namespace], Api]
Progress = Callable[[str], None]
DEFAULT_URLS = {"opsgenie": "https://api.opsgenie.com", "pagerduty": "https://api.pagerduty.com"}
NAMES = {"opsgenie": "Opsgenie", "pagerduty": "PagerDuty"}


def _progress(err: TextIO) -> Progress:
    def say(message: str) -> None:
        err.write(message + "\n")
        err.flush()

    return say


def integration_types(api: Api) -> frozenset[str] | None:
    """The integration types the server takes (from its OpenAPI document), or None if unknown."""
    try:
        found = api.get("/api/v1/openapi.json")
    except ApiError:
        return None
    schema = ((found or {}).get("components") or {}).get("schemas", {}).get("IntegrationCreate", {})
    kinds = (schema.get("properties") or {}).get("type", {}).get("enum")
    return frozenset(str(kind) for kind in kinds) if isinstance(kinds, list) else None


def _credential(args: argparse.Namespace, vendor: str) -> tuple[str, str]:
    environ: dict[str, str] = getattr(args, "environ", {}) or {}
    if vendor == "opsgenie":
        key = args.opsgenie_key or environ.get("OPSGENIE_API_KEY")
        url = args.opsgenie_url or environ.get("OPSGENIE_API_URL") or DEFAULT_URLS[vendor]
        if not key:
            raise UsageError("tocsin import opsgenie: no Opsgenie API key: give --opsgenie-key or set OPSGENIE_API_KEY")
        return key, url
    token = args.pagerduty_token or environ.get("PAGERDUTY_API_TOKEN")
    url = args.pagerduty_url or environ.get("PAGERDUTY_API_URL") or DEFAULT_URLS[vendor]
    if not token:
        raise UsageError(
            "tocsin import pagerduty: no PagerDuty API token: give --pagerduty-token or set PAGERDUTY_API_TOKEN"
        )
    return token, url


def read_vendor(vendor: str, args: argparse.Namespace, now: datetime, progress: Progress) -> Any:
    """The vendor's account as its reader fetches it (VendorError when the vendor refuses)."""
    secret, url = _credential(args, vendor)
    if vendor == "opsgenie":
        return OpsgenieReader(opsgenie_client(url, secret), progress).read()
    api = pagerduty_reader.client(secret, url)
    return pagerduty_reader.PagerDutyReader(api, now=now, progress=progress).read()


def translate(vendor: str, account: Any, existing: Existing, now: datetime) -> Translation:
    context = Context(vendor, now, existing)
    if vendor == "opsgenie":
        return opsgenie_translate.translate(account, context)
    return pagerduty_translate.translate(account, context)


def run_import(args: argparse.Namespace, connect: Connect, out: TextIO, err: TextIO, stdin: TextIO) -> int:
    vendor: str = args.vendor
    now: datetime = args.now
    progress = _progress(err)
    api = connect(args)
    try:  # the vendor first: a refused credential fails before anything else is read
        account = read_vendor(vendor, args, now, progress)
    except VendorError as error:
        err.write(f"tocsin: {error}\n")
        return EXIT_FAILURE
    progress("tocsin: reading the organization")
    current = config_cli.read_current(api, now=now, progress=progress)
    translation = translate(vendor, account, Existing.of(current.document, integration_types(api)), now)
    counts = account.counts()
    planned = config_cli.plan_document(translation.document, current, now=now)
    for warning in current.warnings:
        err.write(f"warning: {warning}\n")
    name = NAMES[vendor]
    body: dict[str, Any] = report.as_json(planned, translation, vendor=vendor, counts=counts)
    if not args.apply:
        if args.json:
            out.write(report.dumps(body))
        else:
            out.write(report.table(planned, translation, vendor=name, counts=counts))
            out.write("Nothing was changed (--plan). Run with --apply to make these changes.\n")
        return EXIT_OK
    if not args.json:
        out.write(report.table(planned, translation, vendor=name, counts=counts))
    outcome = None
    if planned.changes:
        outcome = config_cli.apply_plan(api, current, planned, now=now, progress=progress, environ=args.environ)
        if not args.json:
            made = sum(1 for action in outcome.done if action.op == "create")
            out.write(f"Applied: {made} created, {len(outcome.done) - made} updated.\n")
    elif not args.json:
        out.write(f"Nothing to do: a second import of the same {name} setup changes nothing.\n")
    sheet = cutover.sheet(
        translation,
        outcome,
        api.all("/api/v1/integrations"),
        api.all("/api/v1/heartbeats") if translation.heartbeats else [],
        vendor=vendor,
        base_url=api.base_url,
    )
    checks = verify.pagerduty(api, account, translation) if vendor == "pagerduty" else []
    if args.json:
        body["verified"] = verify.as_json(checks)
        body["applied"] = {
            "created": sum(1 for a in (outcome.done if outcome else []) if a.op == "create"),
            "updated": sum(1 for a in (outcome.done if outcome else []) if a.op == "update"),
        }
        body["cutover"] = sheet.as_dict()
        out.write(report.dumps(body))
    else:
        out.write(verify.text(checks, name))
        out.write(cutover.text(sheet))
    return EXIT_OK


def register(commands: Any) -> None:
    """Adds `import opsgenie` and `import pagerduty` to the `tocsin` parser."""
    parser = commands.add_parser("import", help="bring an Opsgenie or PagerDuty setup over (plan, then apply)")
    vendors = parser.add_subparsers(dest="vendor", metavar="VENDOR", required=True)
    for vendor, about in (
        ("opsgenie", "read an Opsgenie account (REST API v2, GenieKey)"),
        ("pagerduty", "read a PagerDuty account (REST API v2, API token)"),
    ):
        command = vendors.add_parser(vendor, help=about)
        mode = command.add_mutually_exclusive_group(required=True)
        mode.add_argument("--plan", action="store_true", help="show what would change; change nothing")
        mode.add_argument("--apply", action="store_true", help="make the changes, then print the cut-over sheet")
        command.add_argument("--json", action="store_true", help="print the plan (and the sheet) as JSON")
        # Tocsin's own options may come after the subcommand too (SUPPRESS: absent, they keep the top level's).
        command.add_argument("--url", default=argparse.SUPPRESS, help="as tocsin --url")
        command.add_argument("--key", default=argparse.SUPPRESS, help="as tocsin --key")
        if vendor == "opsgenie":
            command.add_argument("--opsgenie-key", help="an Opsgenie API key (env OPSGENIE_API_KEY)")
            command.add_argument(
                "--opsgenie-url",
                help="the API's base URL: https://api.opsgenie.com (default), https://api.eu.opsgenie.com "
                "(env OPSGENIE_API_URL)",
            )
        else:
            command.add_argument("--pagerduty-token", help="a PagerDuty REST API token (env PAGERDUTY_API_TOKEN)")
            command.add_argument(
                "--pagerduty-url",
                help="the API's base URL: https://api.pagerduty.com (default), https://api.eu.pagerduty.com "
                "(env PAGERDUTY_API_URL)",
            )
        command.set_defaults(handler=run_import, needs_api=True)
