"""Admin CLI: bootstrap organizations and manage API keys without the HTTP API.

    python -m chalicelib.cli provision
    python -m chalicelib.cli create-org --name Acme --owner-email ops@acme.example --owner-name "Ops"
    python -m chalicelib.cli create-key --org ORG --name ci --scopes incidents:read,incidents:write
    python -m chalicelib.cli list-keys --org ORG
    python -m chalicelib.cli revoke-key --org ORG --key-id KEY_ID
    python -m chalicelib.cli list-services --org ORG

It works against whatever the environment points at: the local emulator (AWS_ENDPOINT_URL, or
--local to read it from .local/demo.json while `make run` is up) or real AWS (TABLE_PREFIX,
AWS credentials and region as usual). Results are JSON on stdout; errors are one line on stderr
and a non-zero exit status.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from chalicelib.auth.scopes import ALL_SCOPES

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2

Command = Callable[[argparse.Namespace], Any]


class CliError(Exception):
    """A user-facing failure: printed as one line, never as a traceback."""


# --- output ---------------------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        from chalicelib import clock

        return clock.isoformat(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(item) for item in value]
    return value


def _emit(result: Any, out: TextIO) -> None:
    out.write(json.dumps(_jsonable(result), indent=2, sort_keys=False) + "\n")


def _key_json(key: Any) -> dict[str, Any]:
    from chalicelib.apikey.models import ApiKeyV1

    dumped: dict[str, Any] = ApiKeyV1.of(key).model_dump(mode="json")
    return dumped


# --- arguments ------------------------------------------------------------------------------------


def parse_scopes(text: str) -> list[str]:
    """`a,b` -> ["a", "b"]; `all` (or `*`) is every scope."""
    scopes = [part.strip() for part in text.split(",") if part.strip()]
    if not scopes:
        raise CliError("--scopes needs at least one scope")
    if scopes in (["all"], ["*"]):
        return list(ALL_SCOPES)
    unknown = [scope for scope in scopes if scope not in ALL_SCOPES]
    if unknown:
        raise CliError(f"unknown scopes: {', '.join(unknown)} (valid: {', '.join(ALL_SCOPES)}, or 'all')")
    return scopes


def _require_text(value: str, what: str, max_length: int = 200) -> str:
    cleaned = value.strip()
    if not cleaned:
        raise CliError(f"{what} must not be empty")
    if len(cleaned) > max_length:
        raise CliError(f"{what} must be at most {max_length} characters")
    return cleaned


def _require_organization(organization_id: str) -> Any:
    from chalicelib.organization.service import find_organization

    organization = find_organization(organization_id=organization_id)
    if organization is None:
        raise CliError(f"organization {organization_id!r} not found (check --org and TABLE_PREFIX)")
    return organization


def _now() -> datetime:
    from chalicelib import clock

    return clock.now()


# --- commands -------------------------------------------------------------------------------------


def cmd_provision(args: argparse.Namespace) -> Any:
    from chalicelib.local.provision import provision
    from chalicelib.queue.messages import QUEUES
    from chalicelib.settings import get_settings
    from chalicelib.table_registry import all_models

    provision()
    settings = get_settings()
    tables = sorted({str(model.Meta.table_name) for model in all_models()})
    return {"tables": tables, "queues": [settings.queue_name(q) for q in QUEUES]}


def cmd_create_org(args: argparse.Namespace) -> Any:
    from chalicelib.apikey import service as apikeys
    from chalicelib.organization.service import create_organization
    from chalicelib.settings import get_settings

    name = _require_text(args.name, "--name")
    if args.owner_name is not None and args.owner_email is None:
        raise CliError("--owner-name needs --owner-email")
    if args.owner_email is not None:
        # Checked before anything is written, so a typo leaves no half-made organization.
        from chalicelib.directory import rules

        rules.normalize_email(args.owner_email, field="--owner-email")
        if args.owner_name is not None:
            rules.clean_name(args.owner_name, field="--owner-name")
    now = _now()
    organization = create_organization(name=name, now=now)
    result: dict[str, Any] = {"organization_id": organization.organization_id, "name": organization.name}
    owner = None
    if args.owner_email is not None:
        from chalicelib.directory.users import create_user

        try:
            owner = create_user(
                organization_id=organization.organization_id,
                name=args.owner_name,
                email=args.owner_email,
                now=now,
                role="owner",
            )
        except _user_errors() as error:
            raise CliError(
                f"organization {organization.organization_id} was created but its owner was not "
                f"({_describe(error)}); get a key with `create-key --org {organization.organization_id} "
                "--name owner --scopes all`"
            ) from error
        result["owner"] = {"user_id": owner.user_id, "name": owner.name, "email": owner.email}
    key, plaintext = apikeys.create_api_key(
        organization_id=organization.organization_id,
        name="owner",
        # With an owner, the key is theirs: timelines name them and acknowledging assigns them.
        kind="personal" if owner is not None else "service_account",
        scopes=list(ALL_SCOPES),
        user_id=owner.user_id if owner is not None else None,
        user_email=owner.email if owner is not None else None,
        user_name=owner.name if owner is not None else None,
        created_by="cli",
        now=now,
        settings=get_settings(),
    )
    result["key_id"] = key.key_id
    result["key"] = plaintext
    result["scopes"] = key.scopes
    return result


def cmd_create_key(args: argparse.Namespace) -> Any:
    from chalicelib.apikey import service as apikeys
    from chalicelib.settings import get_settings

    _require_organization(args.org)
    name = _require_text(args.name, "--name", max_length=100)
    scopes = parse_scopes(args.scopes)
    user_email = user_name = None
    if args.kind == "personal":
        if not args.user_id:
            raise CliError("a personal key belongs to a user: pass --user-id")
        from chalicelib.directory.users import get_user

        user = get_user(organization_id=args.org, user_id=args.user_id)
        if not user.is_active:
            raise CliError(f"user {args.user_id} is deactivated; a personal key needs an active user")
        user_email, user_name = user.email, user.name
    elif args.user_id:
        raise CliError("--user-id applies to personal keys only (add --kind personal)")
    key, plaintext = apikeys.create_api_key(
        organization_id=args.org,
        name=name,
        kind=args.kind,
        scopes=scopes,
        user_id=args.user_id,
        user_email=user_email,
        user_name=user_name,
        created_by="cli",
        now=_now(),
        settings=get_settings(),
    )
    return {**_key_json(key), "key": plaintext}


def cmd_revoke_key(args: argparse.Namespace) -> Any:
    from chalicelib.apikey import service as apikeys

    _require_organization(args.org)
    return _key_json(apikeys.revoke_api_key(organization_id=args.org, key_id=args.key_id, now=_now()))


def cmd_list_keys(args: argparse.Namespace) -> Any:
    from chalicelib.apikey import service as apikeys

    _require_organization(args.org)
    return [_key_json(key) for key in apikeys.list_api_keys(organization_id=args.org)]


def cmd_list_services(args: argparse.Namespace) -> Any:
    from chalicelib.catalog.service import list_services

    _require_organization(args.org)
    return [
        {
            "name": service.name,
            "service_key": service.service_key,
            "service_id": service.service_id,
            "description": service.description,
            "is_active": service.is_active,
            "default_severity": service.default_severity,
            "created_at": service.created_at,
        }
        for service in list_services(organization_id=args.org)
    ]


# --- parser ---------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m chalicelib.cli",
        description="Tocsin admin: organizations, API keys and tables. Prints JSON.",
    )
    parser.add_argument(
        "--endpoint-url",
        help="AWS endpoint (a local emulator); default: AWS_ENDPOINT_URL, else real AWS",
    )
    parser.add_argument(
        "--local",
        action="store_true",
        help="talk to the stack `make run` started (reads aws_endpoint_url from $LOCAL_DIR/demo.json)",
    )
    parser.add_argument("--table-prefix", help="table name prefix; default: TABLE_PREFIX, else tocsin-local-")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    provision = commands.add_parser("provision", help="create every table and queue (safe to repeat)")
    provision.set_defaults(handler=cmd_provision)

    create_org = commands.add_parser(
        "create-org", help="create an organization, optionally its owner, and an owner key with every scope"
    )
    create_org.add_argument("--name", required=True, help="organization name")
    create_org.add_argument("--owner-email", help="create an owner user with this email")
    create_org.add_argument("--owner-name", help="the owner's display name")
    create_org.set_defaults(handler=cmd_create_org)

    create_key = commands.add_parser("create-key", help="create an API key (the key is printed once)")
    create_key.add_argument("--org", required=True, help="organization id")
    create_key.add_argument("--name", required=True, help="a label for the key")
    create_key.add_argument("--scopes", required=True, help="comma-separated scopes, or 'all'")
    create_key.add_argument("--kind", choices=("personal", "service_account"), default="service_account")
    create_key.add_argument("--user-id", help="owner of a personal key")
    create_key.set_defaults(handler=cmd_create_key)

    revoke_key = commands.add_parser("revoke-key", help="revoke an API key; it answers 401 from now on")
    revoke_key.add_argument("--org", required=True, help="organization id")
    revoke_key.add_argument("--key-id", required=True, help="the key's id (from list-keys)")
    revoke_key.set_defaults(handler=cmd_revoke_key)

    list_keys = commands.add_parser("list-keys", help="list API keys (never the keys themselves)")
    list_keys.add_argument("--org", required=True, help="organization id")
    list_keys.set_defaults(handler=cmd_list_keys)

    list_services = commands.add_parser("list-services", help="list services with their keys")
    list_services.add_argument("--org", required=True, help="organization id")
    list_services.set_defaults(handler=cmd_list_services)
    from chalicelib.insights.rebuild import add_commands  # the insights commands live with their domain

    add_commands(commands)
    return parser


def _point_environment(args: argparse.Namespace) -> None:
    endpoint = args.endpoint_url
    if args.local and not endpoint:
        demo = Path(os.environ.get("LOCAL_DIR", ".local")) / "demo.json"
        try:
            endpoint = json.loads(demo.read_text())["aws_endpoint_url"]
        except (OSError, ValueError, KeyError) as error:
            raise CliError(f"--local: cannot read aws_endpoint_url from {demo} ({error}); is `make run` up?") from None
    if endpoint:
        os.environ["AWS_ENDPOINT_URL"] = endpoint
        # An emulator accepts any credentials; real ones in the environment are kept.
        os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
        os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
        os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    if args.table_prefix:
        os.environ["TABLE_PREFIX"] = args.table_prefix
    from chalicelib import aws

    if endpoint or args.table_prefix:
        from chalicelib.settings import reset_settings

        reset_settings()
        aws.reset()
    aws.bind_tables()  # the command's entry point: every model on this stage's tables


# --- errors ---------------------------------------------------------------------------------------


def _describe(error: BaseException) -> str:
    """One line a user can act on."""
    from chalicelib.errors import AppError

    if isinstance(error, CliError):
        return str(error)
    if isinstance(error, AppError):
        fields = (error.details.get("fields") if isinstance(error.details, dict) else None) or []
        if fields:
            return "; ".join(f"{f['field']}: {f['message']}" for f in fields)
        return error.message
    text = str(error)
    if "ResourceNotFoundException" in text:
        return (
            "a table does not exist. Run `python -m chalicelib.cli provision`, or check TABLE_PREFIX "
            "and AWS_ENDPOINT_URL / the AWS region"
        )
    if "Could not connect to the endpoint URL" in text or "EndpointConnectionError" in type(error).__name__:
        return f"cannot reach AWS ({text}); is the local stack running, or the region right?"
    if "Unable to locate credentials" in text or type(error).__name__ == "NoCredentialsError":
        return "no AWS credentials: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY"
    return text or type(error).__name__


def _user_errors() -> tuple[type[BaseException], ...]:
    from botocore.exceptions import BotoCoreError, ClientError
    from pydantic import ValidationError
    from pynamodb.exceptions import PynamoDBException

    from chalicelib.errors import AppError

    # RuntimeError: settings refuse to start (e.g. API_KEY_HMAC_SECRET unset outside the local stage).
    return (CliError, AppError, PynamoDBException, BotoCoreError, ClientError, ValidationError, RuntimeError)


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse already printed the usage message
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    handler: Command = args.handler
    try:
        _point_environment(args)
        result = handler(args)
    except KeyboardInterrupt:
        err.write("interrupted\n")
        return 130
    except ImportError as error:
        err.write(f"error: {args.command} needs a module this build lacks ({error})\n")
        return EXIT_ERROR
    except _user_errors() as error:
        err.write(f"error: {_describe(error)}\n")
        return EXIT_ERROR
    _emit(result, out)
    if args.command in ("create-org", "create-key"):
        err.write("The key above is shown once: store it now.\n")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
