"""`make package` (chalice package with the merge template) offline, cfn-lint on its output, and
`make deploy` refusing clearly without credentials."""

from __future__ import annotations

import io
import json
import os
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chalicelib.deploy import __main__ as deploy_cli
from chalicelib.deploy.definitions import function_definitions
from chalicelib.deploy.plain import plain_part
from chalicelib.deploy.stages import ROOT, stage_config
from tests.infra.stack import committed_template

STAGE = "prod"
CFN_LINT_HINT = "cfn-lint is not installed: add `cfn-lint==1.58.0` to requirements-dev.txt (make test reinstalls)"


def make(
    *arguments: str, environment: dict[str, str] | None = None, timeout: int = 240
) -> subprocess.CompletedProcess[str]:
    # -o: never reinstall the venv from here, whatever the requirements files' timestamps say.
    return subprocess.run(
        ["make", "--no-print-directory", "-o", ".venv/.installed", *arguments],
        cwd=ROOT,
        env=environment or dict(os.environ),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def packaged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    dist = tmp_path_factory.mktemp("dist") / STAGE
    completed = make("package", f"STAGE={STAGE}", f"DIST={dist}", "AWS_DEFAULT_REGION=us-east-1")
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    yield dist


@pytest.fixture(scope="module")
def sam(packaged: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((packaged / "sam.json").read_text())
    return document


def lint(template: dict[str, Any]) -> list[str]:
    try:
        from cfnlint.api import ManualArgs, lint
    except ImportError:  # pragma: no cover - the message is the point
        pytest.fail(CFN_LINT_HINT)
    matches = lint(json.dumps(template, indent=1), config=ManualArgs(regions=["us-east-1"]))
    return [f"{m.rule.id} {m.message} (line {m.linenumber})" for m in matches]


def test_package_writes_the_template_and_the_zip(packaged: Path) -> None:
    assert sorted(p.name for p in packaged.iterdir()) == ["deployment.zip", "sam.json"]
    with zipfile.ZipFile(packaged / "deployment.zip") as archive:
        names = set(archive.namelist())
    assert {"app.py", "chalicelib/__init__.py", "chalicelib/queue/messages.py", "pynamodb/__init__.py"} <= names
    # Templates are data files inside chalicelib/, rendered with the shipped Jinja2.
    templates = {"chalicelib/templates/statuspage/page.html", "chalicelib/templates/email/incident_page.txt"}
    assert templates | {"jinja2/__init__.py", "markupsafe/__init__.py"} <= names
    assert not {n for n in names if n.startswith(("tests/", "template/", ".venv/", "bench/"))}
    # A native wheel chalice cannot match to the Lambda runtime is left out with only a warning.
    assert "re2.py" in names and any(n.startswith("_re2.") and n.endswith(".so") for n in names)


def test_cfn_lint_passes_on_the_packaged_template(sam: dict[str, Any]) -> None:
    assert lint(sam) == []


def test_cfn_lint_passes_on_the_plain_part() -> None:
    assert lint(plain_part(committed_template())) == []


def test_chalice_logical_ids_are_the_ones_the_template_patches(sam: dict[str, Any]) -> None:
    """If Chalice renamed a function, the patches would create untyped resources instead."""
    resources = sam["Resources"]
    for function in function_definitions():
        body = resources[function.logical_id]
        assert body["Type"] == "AWS::Serverless::Function", function.logical_id
        assert body["Properties"]["Handler"] == function.handler
    assert all("Type" in body for body in resources.values())


def test_packaged_functions_get_stack_names_secrets_and_partial_batch_failures(sam: dict[str, Any]) -> None:
    resources = sam["Resources"]
    for function in function_definitions():
        variables = resources[function.logical_id]["Properties"]["Environment"]["Variables"]
        assert variables["TABLE_PREFIX"] == {"Ref": "TablePrefix"}
        assert variables["QUEUE_PREFIX"] == {"Ref": "QueuePrefix"}
        assert "API_KEY_HMAC_SECRET" in variables
        if function.event_logical_id:
            event = resources[function.logical_id]["Properties"]["Events"][function.event_logical_id]
            assert event["Type"] == "SQS"
            assert event["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
            assert event["Properties"]["Queue"] == {"Fn::Sub": "${EventsQueue.Arn}"}
            assert event["Properties"]["BatchSize"] == function.batch_size
    # Nothing points at the unprefixed queue name app.py subscribes with.
    assert ":tocsin-events" not in json.dumps(sam)


def test_packaged_roles_carry_the_stage_policy(sam: dict[str, Any]) -> None:
    stage = stage_config(STAGE)
    assert stage.policy_file is not None
    expected = json.loads(stage.policy_file.read_text())
    roles = [body for body in sam["Resources"].values() if body["Type"] == "AWS::IAM::Role"]
    assert roles
    for role in roles:
        assert [p["PolicyDocument"] for p in role["Properties"]["Policies"]] == [expected]


def test_package_refuses_a_stage_without_a_policy(tmp_path: Path) -> None:
    completed = make("package", "STAGE=test", f"DIST={tmp_path / 'out'}")
    assert completed.returncode != 0
    assert "stage test has no iam_policy_file" in completed.stderr
    assert not (tmp_path / "out").exists()


def _without_credentials() -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    environment.update(
        AWS_CONFIG_FILE="/nonexistent/config",
        AWS_SHARED_CREDENTIALS_FILE="/nonexistent/credentials",
        AWS_EC2_METADATA_DISABLED="true",
    )
    return environment


def test_make_deploy_without_credentials_prints_the_plan_and_fails() -> None:
    completed = make(
        "deploy",
        "STAGE=prod",
        "DEPLOY_BUCKET=my-artifacts",
        "PARAMS=PublicBaseUrl=https://incidents.example.com",
        environment=_without_credentials(),
        timeout=60,
    )
    assert completed.returncode != 0
    message = completed.stderr
    assert "not deploying stage prod" in message
    assert "no AWS credentials" in message
    assert "aws cloudformation deploy --region us-east-1 --stack-name tocsin-prod" in message
    assert (
        "--parameter-overrides Stage=prod TablePrefix=tocsin-prod- QueuePrefix=tocsin-prod- "
        "PublicBaseUrl=https://incidents.example.com"
    ) in message
    assert "--s3-bucket my-artifacts" in message


def test_deploy_dry_run_lists_the_commands() -> None:
    out = io.StringIO()
    code = deploy_cli.main(["deploy", "--stage", "dev", "--bucket", "b", "--dry-run"], out=out, err=io.StringIO())
    assert code == 0
    lines = out.getvalue().splitlines()
    assert lines[1].strip() == "make package STAGE=dev AWS_DEFAULT_REGION=us-east-1"
    assert lines[2].strip().startswith("aws cloudformation package")
    assert "CAPABILITY_AUTO_EXPAND" in lines[3] and "TablePrefix=tocsin-dev-" in lines[3]


def test_deploy_refuses_emulator_stages() -> None:
    err = io.StringIO()
    assert deploy_cli.main(["deploy", "--stage", "test", "--dry-run"], out=io.StringIO(), err=err) == 1
    assert "emulator only" in err.getvalue()
