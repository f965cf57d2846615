"""Every variable the template gives the functions is a setting the code reads (no typo goes quietly
unread), and each secret comes from the stage's secret only when its switch is on."""

from __future__ import annotations

from chalicelib.deploy.template import function_environment
from chalicelib.settings import Settings

NOT_SETTINGS = {"TOCSIN_SECRETS_REVISION"}  # changes only to make CloudFormation update the functions


def test_every_variable_is_a_setting() -> None:
    names = {(field.alias or name).upper() for name, field in Settings.model_fields.items()}
    assert set(function_environment()) - NOT_SETTINGS <= names


def test_notification_secrets_are_switched_on_by_their_parameter() -> None:
    environment = function_environment()
    for variable, switch in (("SLACK_BOT_TOKEN", "UseSlack"), ("VOICE_AUTH_TOKEN", "UseVoice")):
        condition, value, _ = environment[variable]["Fn::If"]
        assert condition == switch
        assert "resolve:secretsmanager" in value["Fn::Sub"] and variable in value["Fn::Sub"]
