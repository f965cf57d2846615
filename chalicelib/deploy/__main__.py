"""python -m chalicelib.deploy COMMAND: see the package docstring."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from chalicelib.deploy.stages import DEPLOY_STAGES, ROOT, TEMPLATE_FILE, StageConfig, StageError, stage_config

EXIT_OK = 0
EXIT_FAILED = 1
DEFAULT_REGION = "us-east-1"


def _template_text() -> str:
    from chalicelib.deploy.template import build_template, render

    return render(build_template())


def _policy_text(stage: StageConfig) -> str:
    from chalicelib.deploy.policy import build_policy, render

    return render(build_policy(stage))


def parameter_overrides(stage: StageConfig, extra: str = "") -> list[str]:
    """Stage, TablePrefix and QueuePrefix from .chalice/config.json, then the caller's KEY=VALUE pairs."""
    pairs = [f"{key}={value}" for key, value in stage.parameters().items()]
    return pairs + shlex.split(extra)


def stale_files(stages: Sequence[str]) -> list[str]:
    """Committed generated files that differ from what the code generates now."""
    problems = []
    if not TEMPLATE_FILE.is_file() or TEMPLATE_FILE.read_text() != _template_text():
        relative = TEMPLATE_FILE.relative_to(ROOT)
        problems.append(f"{relative} is stale: python -m chalicelib.deploy template > {relative}")
    for name in stages:
        stage = stage_config(name)
        if stage.policy_file is None:
            problems.append(f"stage {name} has no iam_policy_file in .chalice/config.json")
            continue
        relative = stage.policy_file.relative_to(ROOT)
        if not stage.policy_file.is_file() or stage.policy_file.read_text() != _policy_text(stage):
            problems.append(f"{relative} is stale: python -m chalicelib.deploy policy --stage {name} > {relative}")
    return problems


def deploy_plan(stage: StageConfig, *, stack: str, bucket: str, region: str, extra: str) -> list[list[str]]:
    dist = f"dist/{stage.name}"
    common = f"--region {region}"
    s3 = f"--s3-bucket {shlex.quote(bucket or '<DEPLOY_BUCKET>')} --s3-prefix {stack}"
    return [
        shlex.split(f"make package STAGE={stage.name} AWS_DEFAULT_REGION={region}"),
        shlex.split(
            f"aws cloudformation package {common} --template-file {dist}/sam.json {s3} "
            f"--output-template-file {dist}/packaged.json --use-json"
        ),
        shlex.split(
            f"aws cloudformation deploy {common} --stack-name {stack} --template-file {dist}/packaged.json {s3} "
            "--capabilities CAPABILITY_IAM CAPABILITY_AUTO_EXPAND --no-fail-on-empty-changeset --parameter-overrides"
        )
        + parameter_overrides(stage, extra),
        shlex.split(
            f"aws cloudformation describe-stacks {common} --stack-name {stack} --query Stacks[0].Outputs --output table"
        ),
    ]


def missing_prerequisites(*, bucket: str, region: str) -> list[str]:
    import boto3

    missing = []
    if boto3.session.Session(region_name=region).get_credentials() is None:
        missing.append("no AWS credentials (set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
    if shutil.which("aws") is None:
        missing.append("no `aws` command (install the AWS CLI)")
    if not bucket:
        missing.append("no S3 bucket for the code and template (DEPLOY_BUCKET=<a bucket in the stack's region>)")
    return missing


def cmd_deploy(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    stage = stage_config(args.stage)
    if stage.name not in DEPLOY_STAGES:
        raise StageError(f"stage {stage.name!r} runs on the emulator only; deploy one of: {', '.join(DEPLOY_STAGES)}")
    stack = args.stack or f"tocsin-{stage.name}"
    plan = deploy_plan(stage, stack=stack, bucket=args.bucket, region=args.region, extra=args.parameters)
    listing = "".join(f"  {shlex.join(command)}\n" for command in plan)
    if args.dry_run:
        out.write(f"make deploy STAGE={stage.name} runs:\n{listing}")
        return EXIT_OK
    missing = missing_prerequisites(bucket=args.bucket, region=args.region)
    if missing:
        err.write(
            f"make deploy: not deploying stage {stage.name}:\n"
            + "".join(f"  - {problem}\n" for problem in missing)
            + f"With those in place it runs (see docs/DEPLOY.md):\n{listing}"
        )
        return EXIT_FAILED
    for command in plan:
        out.write(f"+ {shlex.join(command)}\n")
        out.flush()
        completed = subprocess.run(command, cwd=ROOT, check=False)
        if completed.returncode != 0:
            err.write(f"make deploy: `{command[0]} {command[1]}` failed (exit {completed.returncode})\n")
            return completed.returncode
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m chalicelib.deploy", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("template", help="print the merge template (template/resources.json)")
    policy = commands.add_parser("policy", help="print a stage's IAM policy (.chalice/policy-<stage>.json)")
    policy.add_argument("--stage", required=True)
    parameters = commands.add_parser("parameters", help="print a stage's CloudFormation parameter overrides")
    parameters.add_argument("--stage", required=True)
    check = commands.add_parser("check", help="fail when a committed generated file is stale")
    check.add_argument("--stage", action="append", help="a deploy stage (default: all of them)")
    commands.add_parser("calls", help="list the AWS operations the Lambda code makes (static scan)")
    deploy = commands.add_parser("deploy", help="package and deploy with the AWS CLI, when credentials exist")
    deploy.add_argument("--stage", required=True)
    deploy.add_argument("--stack", default="", help="stack name (default tocsin-<stage>)")
    deploy.add_argument("--bucket", default=os.environ.get("DEPLOY_BUCKET", ""), help="S3 bucket for artifacts")
    deploy.add_argument("--region", default=os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION)
    deploy.add_argument("--parameters", default="", help='extra overrides: "PublicBaseUrl=https://... AlarmEmail=..."')
    deploy.add_argument("--dry-run", action="store_true", help="print the commands and exit")
    return parser


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        if args.command == "template":
            out.write(_template_text())
        elif args.command == "policy":
            out.write(_policy_text(stage_config(args.stage)))
        elif args.command == "parameters":
            out.write(shlex.join(parameter_overrides(stage_config(args.stage))) + "\n")
        elif args.command == "check":
            problems = stale_files(args.stage or DEPLOY_STAGES)
            for problem in problems:
                err.write(f"{problem}\n")
            return EXIT_FAILED if problems else EXIT_OK
        elif args.command == "calls":
            from chalicelib.deploy.awscalls import find_calls

            for call in find_calls():
                out.write(f"{call.service}:{call.operation}\t{call.where}\n")
        elif args.command == "deploy":
            return cmd_deploy(args, out, err)
    except StageError as error:
        err.write(f"error: {error}\n")
        return EXIT_FAILED
    return EXIT_OK


if __name__ == "__main__":
    # Generating needs the app importable from the project root, whatever the working directory.
    sys.path.insert(0, str(Path(ROOT)))
    sys.exit(main())
