"""The admin CLI against moto: exit codes, JSON on stdout, one-line errors on stderr."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chalicelib import cli
from chalicelib.api.credentials import authenticate
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.errors import Unauthorized
from chalicelib.settings import get_settings
from tests.conftest import NOW

ROOT = Path(__file__).resolve().parents[2]


def run(*argv: str) -> tuple[int, Any, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    text = out.getvalue()
    return code, json.loads(text) if text.strip() else None, err.getvalue()


def create_org(*extra: str) -> dict[str, Any]:
    code, printed, err = run("create-org", "--name", "Acme", *extra)
    assert code == 0, err
    assert isinstance(printed, dict)
    return printed


def test_create_org_prints_an_owner_key_that_authenticates(aws_env: None) -> None:
    printed = create_org()
    assert printed["name"] == "Acme"
    assert printed["key"].startswith("tcs_")
    assert sorted(printed["scopes"]) == sorted(ALL_SCOPES)
    principal = authenticate(authorization=f"Bearer {printed['key']}", now=NOW, settings=get_settings())
    assert principal.organization_id == printed["organization_id"]
    assert principal.scopes == frozenset(ALL_SCOPES)
    assert principal.key_id == printed["key_id"]

    from chalicelib.organization.service import get_organization

    assert get_organization(organization_id=printed["organization_id"]).name == "Acme"


def test_create_org_warns_that_the_key_is_shown_once(aws_env: None) -> None:
    code, _, err = run("create-org", "--name", "Acme")
    assert code == 0
    assert "shown once" in err


def test_create_org_with_an_owner(aws_env: None) -> None:
    printed = create_org("--owner-email", "Owner@Acme.example", "--owner-name", "Olga Owner")
    owner = printed["owner"]
    assert owner["email"] == "owner@acme.example"
    assert owner["name"] == "Olga Owner"

    from chalicelib.directory.users import get_user

    user = get_user(organization_id=printed["organization_id"], user_id=owner["user_id"])
    assert user.role == "owner"
    principal = authenticate(authorization=f"Bearer {printed['key']}", now=NOW, settings=get_settings())
    assert principal.user_id == owner["user_id"]
    assert principal.key_kind == "personal"
    assert principal.scopes == frozenset(ALL_SCOPES)


def test_create_org_with_a_bad_owner_email_writes_nothing(aws_env: None) -> None:
    code, printed, err = run("create-org", "--name", "Acme", "--owner-email", "not-an-email")
    assert code == 1
    assert printed is None
    assert err.startswith("error: ")
    assert "email" in err
    assert "Traceback" not in err
    from chalicelib import aws
    from chalicelib.organization.tables import OrganizationRecord

    assert aws.client("dynamodb").scan(TableName=OrganizationRecord.Meta.table_name)["Count"] == 0


def test_create_key_list_and_revoke(aws_env: None) -> None:
    org_id = create_org()["organization_id"]

    code, created, err = run(
        "create-key", "--org", org_id, "--name", "ci", "--scopes", "incidents:read, incidents:write"
    )
    assert code == 0, err
    assert created["scopes"] == ["incidents:read", "incidents:write"]
    assert created["kind"] == "service_account"
    principal = authenticate(authorization=f"Bearer {created['key']}", now=NOW, settings=get_settings())
    assert principal.scopes == frozenset({"incidents:read", "incidents:write"})

    code, listed, _ = run("list-keys", "--org", org_id)
    assert code == 0
    assert {k["name"] for k in listed} == {"owner", "ci"}
    assert created["key"] not in json.dumps(listed)
    assert all("key" not in k for k in listed)
    [ci] = [k for k in listed if k["name"] == "ci"]
    assert ci["prefix"] == created["key"][:10]
    assert ci["revoked_at"] is None

    code, revoked, _ = run("revoke-key", "--org", org_id, "--key-id", created["id"])
    assert code == 0
    assert revoked["revoked_at"] is not None
    with pytest.raises(Unauthorized):
        authenticate(authorization=f"Bearer {created['key']}", now=NOW, settings=get_settings())
    [ci] = [k for k in run("list-keys", "--org", org_id)[1] if k["name"] == "ci"]
    assert ci["revoked_at"] == revoked["revoked_at"]


def test_create_key_with_every_scope(aws_env: None) -> None:
    org_id = create_org()["organization_id"]
    code, created, _ = run("create-key", "--org", org_id, "--name", "all", "--scopes", "all")
    assert code == 0
    assert sorted(created["scopes"]) == sorted(ALL_SCOPES)


def test_personal_key_for_a_user(aws_env: None) -> None:
    from chalicelib.directory.users import create_user

    org_id = create_org()["organization_id"]
    user = create_user(organization_id=org_id, name="Ria", email="ria@acme.example", now=NOW)
    code, created, err = run(
        "create-key", "--org", org_id, "--name", "ria", "--scopes", "incidents:read", "--kind", "personal",
        "--user-id", user.user_id,
    )  # fmt: skip
    assert code == 0, err
    assert created["user_id"] == user.user_id
    principal = authenticate(authorization=f"Bearer {created['key']}", now=NOW, settings=get_settings())
    assert principal.email == "ria@acme.example"

    code, _, err = run(
        "create-key", "--org", org_id, "--name", "x", "--scopes", "admin", "--kind", "personal", "--user-id", "nobody"
    )
    assert code == 1
    assert "not found" in err.lower()

    from chalicelib.directory.users import update_user

    update_user(organization_id=org_id, user_id=user.user_id, now=NOW, is_active=False)
    code, _, err = run(
        "create-key",
        "--org",
        org_id,
        "--name",
        "x",
        "--scopes",
        "admin",
        "--kind",
        "personal",
        "--user-id",
        user.user_id,
    )
    assert code == 1
    assert "deactivated" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["create-key", "--name", "x", "--scopes", "nope:read"], "unknown scopes: nope:read"),
        (["create-key", "--name", "x", "--scopes", " , "], "at least one scope"),
        (["create-key", "--name", "x", "--scopes", "admin", "--kind", "personal"], "--user-id"),
        (["create-key", "--name", "x", "--scopes", "admin", "--user-id", "u1"], "personal keys only"),
        (["create-key", "--name", "  ", "--scopes", "admin"], "must not be empty"),
        (["revoke-key", "--key-id", "no-such-key"], "not found"),
    ],
    ids=["unknown-scope", "no-scope", "personal-needs-user", "user-needs-personal", "blank-name", "unknown-key"],
)
def test_user_errors_are_one_line_on_stderr(aws_env: None, argv: list[str], message: str) -> None:
    org_id = create_org()["organization_id"]
    code, printed, err = run(argv[0], "--org", org_id, *argv[1:])
    assert code == 1
    assert printed is None
    assert err.startswith("error: ")
    assert message in err
    assert "Traceback" not in err
    assert err.count("\n") == 1


def test_unknown_organization_is_refused(aws_env: None) -> None:
    for command in (["list-keys"], ["list-services"], ["revoke-key", "--key-id", "k"]):
        code, _, err = run(command[0], "--org", "no-such-org", *command[1:])
        assert code == 1, command
        assert "organization 'no-such-org' not found" in err
    code, _, err = run("create-key", "--org", "no-such-org", "--name", "x", "--scopes", "admin")
    assert code == 1
    assert "not found" in err


def test_usage_errors_exit_2(aws_env: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    assert cli.main(["create-org"]) == 2
    assert cli.main(["rm-rf"]) == 2
    assert cli.main(["create-key", "--org", "o", "--name", "n", "--scopes", "admin", "--kind", "robot"]) == 2
    assert "usage:" in capsys.readouterr().err


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    assert "create-org" in capsys.readouterr().out


def test_missing_tables_are_explained(aws_env: None) -> None:
    code, _, err = run("--table-prefix", "nothing-here-", "create-org", "--name", "Acme")
    assert code == 1
    assert "provision" in err
    assert "Traceback" not in err


def test_provision_is_repeatable(aws_env: None) -> None:
    for _ in range(2):
        code, printed, err = run("provision")
        assert code == 0, err
    assert "tocsin-test-api-keys" in printed["tables"]
    assert printed["queues"]


def test_provision_with_another_prefix_then_use_it(aws_env: None) -> None:
    code, printed, _ = run("--table-prefix", "tocsin-other-", "provision")
    assert code == 0
    assert "tocsin-other-api-keys" in printed["tables"]
    printed = create_org()
    assert (
        authenticate(authorization=f"Bearer {printed['key']}", now=NOW, settings=get_settings()).organization_id
        == printed["organization_id"]
    )


def test_list_services(aws_env: None) -> None:
    from chalicelib.catalog.service import create_service

    org_id = create_org()["organization_id"]
    assert run("list-services", "--org", org_id)[1] == []
    service = create_service(organization_id=org_id, name="Checkout", now=NOW, default_severity="SEV2")
    code, listed, _ = run("list-services", "--org", org_id)
    assert code == 0
    assert listed == [
        {
            "name": "Checkout",
            "service_key": service.service_key,
            "service_id": service.service_id,
            "description": None,
            "is_active": True,
            "default_severity": "SEV2",
            "created_at": "2026-11-22T12:00:00.000Z",
        }
    ]


def test_local_flag_needs_the_demo_file(aws_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_DIR", str(tmp_path))
    code, _, err = run("--local", "list-keys", "--org", "x")
    assert code == 1
    assert "make run" in err


def test_runs_as_a_module() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "chalicelib.cli", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    assert "revoke-key" in completed.stdout
