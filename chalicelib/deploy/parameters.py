"""The merge template's parameters (what an operator chooses per stack) and the conditions
derived from them (chalicelib/deploy/template.py builds the rest)."""

from __future__ import annotations

from typing import Any

from chalicelib.deploy.stages import DEPLOY_STAGES


def ref(name: str) -> dict[str, Any]:
    """CloudFormation's Ref of a parameter or resource."""
    return {"Ref": name}


PARAMETERS: dict[str, Any] = {
    "Stage": {
        "Type": "String",
        "AllowedValues": list(DEPLOY_STAGES),
        "Description": "Chalice stage (TOCSIN_STAGE); prod turns on table deletion protection",
    },
    "TablePrefix": {
        "Type": "String",
        "AllowedPattern": "^[A-Za-z0-9_.-]+$",
        "Description": "Prefix of every table name (TABLE_PREFIX), e.g. tocsin-prod-",
    },
    "QueuePrefix": {
        "Type": "String",
        "AllowedPattern": "^[A-Za-z0-9_-]+$",
        "Description": "Prefix of every queue and topic name (QUEUE_PREFIX), e.g. tocsin-prod-",
    },
    "AlarmEmail": {
        "Type": "String",
        "Default": "",
        "Description": "Optional address subscribed to the alarm topic (confirm the e-mail AWS sends)",
    },
    "PublicAppUrl": {
        "Type": "String",
        "Default": "",
        "Description": "The responder console's URL, the base of notification links (default: PublicBaseUrl/app)",
    },
    "PublicBaseUrl": {
        "Type": "String",
        "Default": "",
        "Description": "PUBLIC_BASE_URL: the API's public URL (custom domain, or the EndpointURL output)",
    },
    "UseJwtSecret": {
        "Type": "String",
        "AllowedValues": ["false", "true"],
        "Default": "false",
        "Description": "true: JWT_SECRET (HS256 sessions) comes from the stage's secret",
    },
    "JwtJwksUrl": {"Type": "String", "Default": "", "Description": "JWT_JWKS_URL for RS256 sessions"},
    "JwtIssuer": {"Type": "String", "Default": "", "Description": "JWT_ISSUER (empty: not checked)"},
    "JwtAudience": {"Type": "String", "Default": "", "Description": "JWT_AUDIENCE (empty: not checked)"},
    "DomainName": {
        "Type": "String",
        "Default": "",
        "Description": "Optional custom domain for the API, e.g. incidents.example.com",
    },
    "CertificateArn": {
        "Type": "String",
        "Default": "",
        "Description": "ACM certificate for DomainName, in the stack's region (required with DomainName)",
    },
    "HostedZoneId": {
        "Type": "String",
        "Default": "",
        "Description": "Optional Route 53 hosted zone of DomainName: the stack then adds the alias record",
    },
    # Notifications: Slack and the voice provider's tokens come from the stage's secret when turned
    # on; the rest are plain settings.
    "SesSender": {"Type": "String", "Default": "", "Description": "SES_SENDER: a verified SES identity"},
    "UseSlack": {
        "Type": "String",
        "AllowedValues": ["false", "true"],
        "Default": "false",
        "Description": "true: SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET come from the stage's secret (Slack)",
    },
    "UseVoice": {
        "Type": "String",
        "AllowedValues": ["false", "true"],
        "Default": "false",
        "Description": "true: VOICE_AUTH_TOKEN comes from the stage's secret (phone calls through Twilio)",
    },
    "UsePushover": {
        "Type": "String",
        "AllowedValues": ["false", "true"],
        "Default": "false",
        "Description": "true: PUSHOVER_APP_TOKEN comes from the stage's secret (Pushover contact methods)",
    },
    "VoiceAccountSid": {"Type": "String", "Default": "", "Description": "VOICE_ACCOUNT_SID (Twilio account)"},
    "VoiceFromNumber": {"Type": "String", "Default": "", "Description": "VOICE_FROM_NUMBER, E.164"},
    "SmsSenderId": {"Type": "String", "Default": "", "Description": "SMS_SENDER_ID where the country allows one"},
    "SmsOriginationNumber": {
        "Type": "String",
        "Default": "",
        "Description": "SMS_ORIGINATION_NUMBER: the number SMS pages come from (E.164)",
    },
    "SmsInboundTopicArn": {
        "Type": "String",
        "Default": "",
        "Description": "SMS_INBOUND_TOPIC_ARN: the SNS topic two-way SMS delivers replies to (empty: replies off)",
    },
    "SlackTeamId": {
        "Type": "String",
        "Default": "",
        "Description": "SLACK_TEAM_ID: the Slack workspace (T...) of the bot token; clicks from others act nowhere",
    },
    "SecretsRevision": {
        "Type": "String",
        "Default": "1",
        "Description": "Change it after changing the secret, so the functions pick up the new values",
    },
}

CONDITIONS: dict[str, Any] = {
    "IsProd": {"Fn::Equals": [ref("Stage"), "prod"]},
    "HasAlarmEmail": {"Fn::Not": [{"Fn::Equals": [ref("AlarmEmail"), ""]}]},
    "HasPublicAppUrl": {"Fn::Not": [{"Fn::Equals": [ref("PublicAppUrl"), ""]}]},
    "HasPublicBaseUrl": {"Fn::Not": [{"Fn::Equals": [ref("PublicBaseUrl"), ""]}]},
    "UseJwtSecret": {"Fn::Equals": [ref("UseJwtSecret"), "true"]},
    "UseSlack": {"Fn::Equals": [ref("UseSlack"), "true"]},
    "UseVoice": {"Fn::Equals": [ref("UseVoice"), "true"]},
    "UsePushover": {"Fn::Equals": [ref("UsePushover"), "true"]},
    "HasSesSender": {"Fn::Not": [{"Fn::Equals": [ref("SesSender"), ""]}]},
    "HasVoiceAccountSid": {"Fn::Not": [{"Fn::Equals": [ref("VoiceAccountSid"), ""]}]},
    "HasVoiceFromNumber": {"Fn::Not": [{"Fn::Equals": [ref("VoiceFromNumber"), ""]}]},
    "HasSmsSenderId": {"Fn::Not": [{"Fn::Equals": [ref("SmsSenderId"), ""]}]},
    "HasSmsOriginationNumber": {"Fn::Not": [{"Fn::Equals": [ref("SmsOriginationNumber"), ""]}]},
    "HasSmsInboundTopicArn": {"Fn::Not": [{"Fn::Equals": [ref("SmsInboundTopicArn"), ""]}]},
    "HasSlackTeamId": {"Fn::Not": [{"Fn::Equals": [ref("SlackTeamId"), ""]}]},
    "HasJwtJwksUrl": {"Fn::Not": [{"Fn::Equals": [ref("JwtJwksUrl"), ""]}]},
    "HasJwtIssuer": {"Fn::Not": [{"Fn::Equals": [ref("JwtIssuer"), ""]}]},
    "HasJwtAudience": {"Fn::Not": [{"Fn::Equals": [ref("JwtAudience"), ""]}]},
    "HasCustomDomain": {"Fn::Not": [{"Fn::Equals": [ref("DomainName"), ""]}]},
    "HasDnsRecord": {
        "Fn::And": [{"Condition": "HasCustomDomain"}, {"Fn::Not": [{"Fn::Equals": [ref("HostedZoneId"), ""]}]}]
    },
}
