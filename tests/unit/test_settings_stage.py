"""Which stage a process runs as, and that a deployed one never falls back to the local stage's
public secrets (issue 27 finding 10)."""

from __future__ import annotations

import pytest

from chalicelib.settings import LOCAL_SLACK_SIGNING_SECRET, check_secrets, from_environment


@pytest.mark.parametrize("marker", ["AWS_LAMBDA_FUNCTION_NAME", "AWS_EXECUTION_ENV"])
def test_a_lambda_without_tocsin_stage_refuses_to_start(marker: str) -> None:
    with pytest.raises(RuntimeError, match="TOCSIN_STAGE must be set"):
        from_environment({marker: "tocsin-dev-api_handler"})


def test_a_lambda_with_its_stage_starts_and_uses_no_local_secret() -> None:
    settings = from_environment(
        {"AWS_LAMBDA_FUNCTION_NAME": "tocsin-prod", "TOCSIN_STAGE": "prod", "API_KEY_HMAC_SECRET": "s" * 40}
    )
    check_secrets(settings)
    assert not settings.is_local
    assert settings.slack_signing_key() is None  # clicks refused until a real secret is set
    assert settings.slack_signing_key() != LOCAL_SLACK_SIGNING_SECRET


def test_outside_lambda_the_default_stage_is_local() -> None:
    settings = from_environment({})
    assert settings.is_local
    assert settings.slack_signing_key() == LOCAL_SLACK_SIGNING_SECRET


def test_a_deployed_stage_with_the_local_api_key_secret_refuses_to_start() -> None:
    with pytest.raises(RuntimeError, match="API_KEY_HMAC_SECRET"):
        check_secrets(from_environment({"TOCSIN_STAGE": "prod"}))
