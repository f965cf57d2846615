"""pytest plugin: every test that provisions the emulator gets the CloudFormation stack instead.

    .venv/bin/python -m pytest -p tests.infra.cfn_provision tests/service

`tests/conftest.py`'s `aws_env` (and the CLI's `provision` command) call
`chalicelib.local.provision.provision()`; this plugin swaps it for a deploy of the plain part
of template/resources.json on moto's CloudFormation, named by the current prefixes, so the
service-layer suite runs against the resources the template creates. With
TOCSIN_AWS_CALLS_FILE=<path> it also records the AWS calls the application code made (see
tests/infra/recorder.py) and writes them there when the session ends.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

CALLS_FILE_VARIABLE = "TOCSIN_AWS_CALLS_FILE"
_recording = ExitStack()
_calls: list[object] = []


def provision_from_template() -> None:
    import boto3
    from botocore.exceptions import ClientError

    from chalicelib import aws
    from chalicelib.settings import get_settings
    from chalicelib.table_registry import all_models
    from tests.infra.stack import deploy_stack, stack_name_for

    settings = get_settings()
    aws.bind_tables()  # as provision() does: models point at this stage's tables from now on
    for model in all_models():
        aws.reset_model_binding(model)
    name = stack_name_for(settings.table_prefix, settings.queue_prefix)
    try:
        boto3.client("cloudformation", region_name=settings.aws_region).describe_stacks(StackName=name)
        return  # provisioning is repeatable, as provision() is
    except ClientError:
        pass
    deploy_stack(
        stage="dev",
        table_prefix=settings.table_prefix,
        queue_prefix=settings.queue_prefix,
        stack_name=name,
        region=settings.aws_region,
    )


@pytest.fixture(autouse=True)
def _provision_with_cloudformation(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import chalicelib.local.provision as provision_module

    monkeypatch.setattr(provision_module, "provision", provision_from_template)
    yield


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get(CALLS_FILE_VARIABLE):
        from tests.infra.recorder import record_aws_calls

        _calls[:] = []
        _calls.append(_recording.enter_context(record_aws_calls()))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    target = os.environ.get(CALLS_FILE_VARIABLE)
    if target and _calls:
        from tests.infra.recorder import save

        recorded = _calls[0]
        _recording.close()
        save(recorded, Path(target))  # type: ignore[arg-type]
