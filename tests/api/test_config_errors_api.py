"""`tocsin config` when things go wrong: a refused key, a key without a scope, an invalid
document (nothing is asked of the server), a reference naming nothing (its line), a server that
refuses part-way (exit 1; running again finishes), usage errors (exit 2), a secret from the
environment, and the offline commands."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.apikey import service as apikeys
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.client.document import schema_text
from chalicelib.settings import get_settings
from tests.api.config_documents import FULL
from tests.api.tocsin_client import Answer, InProcess, api, tocsin
from tests.conftest import NOW, Org


@pytest.fixture
def transport(client: Any) -> InProcess:
    clock.freeze(NOW)
    return InProcess(client)


def test_a_refused_key_is_one_clear_line_and_exit_1(transport: InProcess, org: Org) -> None:
    ran = tocsin(transport, "tk_not_a_key", "config", "export", now=NOW)
    assert ran.status == 1 and ran.out == ""
    assert ran.err == "tocsin: the API key was refused (401 UNAUTHORIZED): check --key or TOCSIN_API_KEY\n"


def test_a_key_without_a_scope_names_it(transport: InProcess, org: Org) -> None:
    ran = tocsin(transport, org.readonly_key, "config", "export", now=NOW)
    assert ran.status == 1
    assert ran.err.splitlines()[-1].startswith(
        "tocsin: the API key lacks a scope this needs: GET /api/v1/users: 403 FORBIDDEN"
    )


def test_without_the_admin_scope_export_works_without_sources(transport: InProcess, org: Org) -> None:
    _, reader = apikeys.create_api_key(
        organization_id=org.organization_id,
        name="reader",
        kind="service_account",
        scopes=[scope for scope in ALL_SCOPES if scope.endswith(":read")],
        now=NOW,
        settings=get_settings(),
    )
    ran = tocsin(transport, reader, "config", "export", now=NOW)
    assert ran.status == 0, ran.err
    assert ran.out.startswith("version: 1\nusers: []\n")
    assert "warning: the import ledger is not readable with this key (the admin scope): sources are left out" in ran.err


def test_an_invalid_document_is_refused_before_any_request(transport: InProcess, org: Org) -> None:
    text = "version: 1\nservices:\n  - name: Payments\n    default_severity: SEV9\n"
    ran = tocsin(transport, org.owner_key, "config", "apply", "-f", "-", now=NOW, stdin=text)
    assert ran.status == 1 and transport.seen == []
    assert ran.err.startswith("tocsin: <stdin>:4: services.0.default_severity: 'SEV9' is not one of")


def test_an_unknown_reference_names_its_line(transport: InProcess, org: Org) -> None:
    text = FULL.replace(
        "    escalation_policy: Default\n    default_severity", "    escalation_policy: Defualt\n    default_severity"
    )
    line = 1 + text.splitlines().index("    escalation_policy: Defualt")
    ran = tocsin(transport, org.owner_key, "config", "plan", "-f", "-", now=NOW, stdin=text)
    assert ran.status == 1
    assert ran.err == (  # found offline, before any request
        f"tocsin: <stdin>:{line}: services.0.escalation_policy: "
        "no escalation policy 'Defualt' in the document's escalation_policies\n"
    )
    assert transport.seen == []
    # A section the document leaves out is looked up in the organization, when planning.
    partial = "version: 1\nservices:\n  - name: Payments\n    team: Platform\n"
    ran = tocsin(transport, org.owner_key, "config", "plan", "-f", "-", now=NOW, stdin=partial)
    assert ran.status == 1
    assert ran.err.splitlines()[-1] == (
        "tocsin: <stdin>:4: services.0.team: no team 'Platform' in the organization (teams are not in the document)"
    )
    assert tocsin(transport, org.owner_key, "config", "validate", "-f", "-", now=NOW, stdin=partial).status == 0


def test_a_refusal_part_way_stops_with_what_was_done_and_a_second_run_finishes(transport: InProcess, org: Org) -> None:
    def refuse_services(method: str, path: str, body: Any) -> Answer | None:
        if method == "POST" and path == "/api/v1/services" and body["name"] == "Web":
            error = {"code": "CONFLICT", "message": "Try again later."}
            return Answer(409, {}, json.dumps({"success": False, "error": error}))
        return None

    transport.refuse = refuse_services
    ran = tocsin(transport, org.owner_key, "config", "apply", "-f", "-", now=NOW, stdin=FULL)
    assert ran.status == 1
    assert ran.err.splitlines()[-2:] == [
        "tocsin: create service 'Web' failed: POST /api/v1/services: 409 CONFLICT: Try again later.",
        "7 of 16 changes were made. Fix the cause and run the apply again: it finishes the job.",
    ]
    client = api(transport, org.owner_key)
    assert [s["name"] for s in client.all("/api/v1/services")] == ["Payments"]
    transport.refuse = None
    again = tocsin(transport, org.owner_key, "config", "apply", "-f", "-", now=NOW, stdin=FULL)
    assert again.status == 0, again.err
    assert "Applied: 9 created, 0 updated, 0 deleted." in again.out
    assert tocsin(transport, org.owner_key, "config", "plan", "-f", "-", now=NOW, stdin=FULL).out.endswith(
        "No changes. The organization matches the document.\n"
    )


def test_a_secret_comes_from_the_environment_never_the_file(transport: InProcess, org: Org) -> None:
    text = "version: 1\nintegrations:\n  - {name: Sentry, type: sentry, client_secret_env: SENTRY_CLIENT_SECRET}\n"
    missing = tocsin(transport, org.owner_key, "config", "apply", "-f", "-", now=NOW, stdin=text)
    assert missing.status == 1
    assert missing.err.splitlines()[-1] == (
        "tocsin: integration 'Sentry' needs the environment variable SENTRY_CLIENT_SECRET (its client secret), "
        "which is not set; nothing was changed"
    )
    assert api(transport, org.owner_key).all("/api/v1/integrations") == []
    done = tocsin(
        transport,
        org.owner_key,
        "config",
        "apply",
        "-f",
        "-",
        now=NOW,
        stdin=text,
        environ={"SENTRY_CLIENT_SECRET": "sentry-client-secret"},
    )
    assert done.status == 0, done.err
    (sentry,) = api(transport, org.owner_key).all("/api/v1/integrations")
    assert sentry["has_client_secret"] is True
    exported = tocsin(transport, org.owner_key, "config", "export", now=NOW).out
    assert "sentry-client-secret" not in exported and "client_secret" not in exported


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["config"], "tocsin config: the following arguments are required: COMMAND"),
        (["config", "plan"], "tocsin config plan: the following arguments are required: -f/--file"),
        (["config", "deploy"], "tocsin config: argument COMMAND: invalid choice: 'deploy'"),
        (["nothing"], "tocsin: argument COMMAND: invalid choice: 'nothing'"),
    ],
)
def test_usage_errors_exit_2(transport: InProcess, org: Org, argv: list[str], message: str) -> None:
    ran = tocsin(transport, org.owner_key, *argv, now=NOW)
    assert ran.status == 2 and ran.err.startswith(message), ran.err


def test_url_and_key_come_from_options_or_the_environment(transport: InProcess, org: Org) -> None:
    import io

    from chalicelib.client.main import run

    def run_with(argv: list[str], environ: dict[str, str]) -> tuple[int, str]:
        err = io.StringIO()
        status = run(argv, out=io.StringIO(), err=err, stdin=io.StringIO(), environ=environ, transport=transport)
        return status, err.getvalue()

    assert run_with(["config", "export"], {}) == (2, "tocsin: no service URL: give --url or set TOCSIN_URL\n")
    assert run_with(["config", "export"], {"TOCSIN_URL": "http://tocsin.test"}) == (
        2,
        "tocsin: no API key: give --key or set TOCSIN_API_KEY\n",
    )
    status, err = run_with(["config", "export"], {"TOCSIN_URL": "http://tocsin.test", "TOCSIN_API_KEY": org.owner_key})
    assert status == 0, err


def test_offline_commands_and_export_to_a_file(transport: InProcess, org: Org, tmp_path: Any) -> None:
    path = tmp_path / "tocsin.yaml"
    path.write_text(FULL)
    ran = tocsin(transport, org.owner_key, "config", "validate", "-f", str(path), now=NOW)
    assert ran.status == 0 and ran.out == f"{path}: valid (16 objects)\n"
    assert tocsin(transport, org.owner_key, "config", "schema", now=NOW).out == schema_text()
    missing = tocsin(transport, org.owner_key, "config", "validate", "-f", str(tmp_path / "nope.yaml"), now=NOW)
    assert (
        missing.status == 1
        and missing.err == f"tocsin: cannot read {tmp_path / 'nope.yaml'}: No such file or directory\n"
    )
    assert transport.seen == []
    written = tmp_path / "out.yaml"
    exported = tocsin(transport, org.owner_key, "config", "export", "-o", str(written), now=NOW)
    assert exported.status == 0 and exported.out == "" and written.read_text().startswith("version: 1\n")
