"""Typed settings read from the environment, lazily and once per process.

Nothing here runs at import time: Lambda cold starts and tests that set up the
emulator first both depend on that.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Stage = Literal["local", "dev", "prod", "test"]


class Settings(BaseModel):  # built on first use, by get_settings
    """Every field is read from the environment variable of the same name, upper-cased.

    A plain pydantic model filled from os.environ: pydantic-settings did the same for ~35 ms
    of import time on every cold start (dotenv, CLI and cloud-provider sources we never use).
    """

    model_config = ConfigDict(extra="ignore", populate_by_name=True, defer_build=True)

    tocsin_stage: Stage = "local"
    aws_region: str = Field(default="us-east-1", alias="AWS_DEFAULT_REGION")
    aws_endpoint_url: str | None = None
    table_prefix: str = "tocsin-local-"
    queue_prefix: str = "tocsin-local-"

    # Secrets. The local defaults exist so `make run` needs no set-up; dev and prod
    # refuse to start with them (see `check_secrets`).
    api_key_hmac_secret: str = "local-insecure-api-key-secret"
    # Signs the one-click links in page emails; unset, a key derived from API_KEY_HMAC_SECRET.
    # Changing it (or that) makes every link already sent invalid.
    email_link_secret: str | None = None
    secrets_encryption_key: str | None = None  # base64 of 32 bytes; seals webhook signing secrets
    jwt_secret: str | None = None
    jwt_jwks_json: str | None = None
    jwt_jwks_url: str | None = None
    jwt_issuer: str | None = None
    jwt_audience: str | None = None

    # Rate limits: requests per window, per bucket.
    rate_limit_api_key: int = 600
    rate_limit_session: int = 600
    rate_limit_anonymous: int = 120
    rate_limit_webhook: int = 100
    # Public status reads, per address: generous, and apart from failed API calls (`anonymous`),
    # so a NAT address's bad credentials never take its status page down during an outage.
    rate_limit_public_status: int = 1200
    # Deliveries whose signature failed, per routing key and address: apart from `webhook`, so
    # forgeries cannot spend a signed integration's budget and silence its real alerts.
    rate_limit_webhook_unverified: int = 100
    # Subscribing to a status page, per address: each accepted request may send an email, so far
    # stricter than public reads.
    rate_limit_status_subscribe: int = 10
    # Subscribe requests naming one email address, across every page, per hour: each may send it
    # a confirmation email (counted whether or not one is sent, so a 429 says nothing of the address).
    subscribe_emails_per_address_per_hour: int = 3
    rate_limit_window_seconds: int = 60

    # Seconds a verified API key may be served from the in-process cache. 0 keeps
    # revocation immediate across every Lambda instance (one GetItem per request).
    auth_cache_seconds: float = 0.0
    # Last-use stamps are written at most this often per key, never per request.
    api_key_last_used_resolution_seconds: int = 300

    public_base_url: str = "http://127.0.0.1:8000"
    # The responder console, the base of every link a notification carries
    # (`{public_app_url}/incidents/{incident_number}`); unset: `{public_base_url}/app`. No
    # notification links to the JSON API, which a browser cannot open without a key.
    public_app_url: str | None = None
    # The console's sign-in: a Cognito user pool and its app client (USER_PASSWORD_AUTH, no
    # client secret). Its ID tokens are also accepted by the API as session JWTs.
    cognito_user_pool_id: str | None = None
    cognito_client_id: str | None = None
    # The pool's public keys as JSON, for a deployment that cannot fetch them (and the tests);
    # unset, they are fetched from the pool's JWKS URL and cached.
    cognito_jwks_json: str | None = None
    # Console sessions end after this long without a request, and this long after sign-in.
    console_idle_minutes: int = Field(default=480, ge=5, le=10080)
    console_absolute_hours: int = Field(default=24, ge=1, le=720)
    # Inbound webhooks: only the local stage may accept plain HTTP, and only when this says so.
    local_allow_http_webhooks: bool = False
    # SNS certificate URL host pattern; only the local stage may widen it (to the emulator).
    sns_cert_host_pattern: str = r"^sns\.[a-zA-Z0-9-]{3,}\.amazonaws\.com(\.cn)?$"
    local_allow_http_sns_certs: bool = False
    # Local stage only: fetch SNS certificates (URLs on sns.<region>.amazonaws.com) from the emulator.
    local_sns_certificate_endpoint: str | None = None
    log_level: str = "INFO"

    # Notifications. SES sends from this address (a verified identity; the local stage verifies
    # it on the emulator). Slack: the Web API base URL and a bot token (xoxb-...). Left unset,
    # the local stage points Slack at its built-in sink ({public_base_url}/local/slack/api) with
    # a placeholder token; other stages use https://slack.com/api and need a token.
    ses_sender: str = "tocsin@localhost.localdomain"
    slack_api_base_url: str | None = None
    slack_bot_token: str | None = None
    slack_timeout_seconds: float = 5.0
    # Slack's app signing secret: interactivity requests (button clicks) carry an HMAC made with
    # it. Left unset, the local stage uses LOCAL_SLACK_SIGNING_SECRET (in .local/demo.json) and
    # other stages refuse every click.
    slack_signing_secret: str | None = None
    # The Slack workspace (team id, T...) the app's bot token belongs to: a click naming another
    # workspace acts nowhere. Comma-separated for an Enterprise Grid's several. Left unset, the
    # local stage uses LOCAL_SLACK_TEAM_ID (in .local/demo.json) and other stages check nothing.
    slack_team_id: str | None = None
    # SMS through Amazon SNS (Publish to a phone number, transactional). Both optional: a sender
    # id where the destination country supports one, an origination number (E.164) otherwise.
    sms_sender_id: str | None = None
    sms_origination_number: str | None = None
    # Replies by SMS (two-way SMS): the SNS topic AWS delivers inbound messages to. Only messages
    # from this topic are read (any AWS account can sign an SNS message); unset, replies are refused.
    sms_inbound_topic_arn: str | None = None
    # Voice calls through Twilio's Calls API (or a provider speaking the same API): base URL,
    # account SID and auth token (HTTP Basic), and the caller id. Left unset, the local stage
    # points at its built-in sink ({public_base_url}/local/voice) with placeholder credentials;
    # other stages use https://api.twilio.com and need all three set.
    voice_api_base_url: str | None = None
    voice_account_sid: str | None = None
    voice_auth_token: str | None = None
    voice_from_number: str | None = None
    voice_timeout_seconds: float = 5.0
    # Chat and push channels (Teams, Mattermost, ntfy, Discord, Google Chat) post to each person's
    # own webhook URL. The local stage posts them to its built-in sink instead
    # ({public_base_url}/local/channel-sink/{type}), which keeps each payload in the outbox, unless
    # this is set (then the local stage posts to the real URLs too).
    local_post_to_real_chat_urls: bool = False
    # Pushover: the application token (create an application at pushover.net) every Pushover
    # method's messages are sent with, and the API's URL. Left unset, the local stage uses a
    # placeholder token and its sink; other stages refuse to send (PUSHOVER_NOT_CONFIGURED).
    pushover_app_token: str | None = None
    pushover_api_url: str = "https://api.pushover.net/1/messages.json"

    # The outbound budget (chalicelib/budget, docs/SECURITY.md): the most messages that may leave
    # per destination, person and organization in a window. These are the deployment's values: an
    # organization's owner may lower each for their organization (GET/PATCH /api/v1/settings/limits),
    # never raise it; an operator raises (or lowers) them here.
    budget_verification_per_destination: int = Field(default=3, ge=1)  # codes to one number, an hour
    budget_verification_per_person: int = Field(default=5, ge=1)  # codes one person asks for, an hour
    budget_page_burst_per_person: int = Field(default=5, ge=1)  # pages a person, per channel, in the burst window
    budget_page_burst_minutes: int = Field(default=10, ge=1, le=60)  # beyond the burst: one digest at its end
    budget_sms_per_organization: int = Field(default=1000, ge=1)  # an hour
    budget_voice_per_organization: int = Field(default=300, ge=1)  # an hour
    budget_email_per_organization: int = Field(default=5000, ge=1)  # to its people, an hour
    budget_chat_per_organization: int = Field(default=5000, ge=1)  # Slack and the chat channels, an hour
    budget_subscriber_email_per_organization: int = Field(default=20000, ge=1)  # status page followers, an hour
    budget_confirmation_per_destination: int = Field(default=3, ge=1)  # subscription confirmations a mailbox, an hour
    budget_messages_per_destination: int = Field(default=60, ge=1)  # notices and replies to one address, an hour
    budget_unknown_sender_reply_per_number: int = Field(default=1, ge=0)  # replies to an unknown number, a day
    budget_unknown_sender_replies: int = Field(default=20, ge=0)  # replies to unknown numbers in all, an hour

    # Local and test stages only (every other stage uses 1): the waits the workers schedule
    # (escalation level delays, SLA due times, webhook retry delays) are divided by this, so a
    # time-driven end-to-end test waits seconds instead of minutes. See clock.scaled.
    time_scale: float = Field(default=1.0, gt=0)

    # CloudWatch embedded-metric log lines (chalicelib.emf): unset, on for the AWS stages (dev,
    # prod) and off for local and test; EMF_METRICS=true or false decides anywhere.
    emf_metrics: bool | None = None

    @property
    def is_local(self) -> bool:
        return self.tocsin_stage in ("local", "test")

    @property
    def emf_enabled(self) -> bool:
        return self.emf_metrics if self.emf_metrics is not None else not self.is_local

    @property
    def effective_time_scale(self) -> float:
        return self.time_scale if self.is_local else 1.0

    def slack_api_url(self) -> str:
        """The Slack Web API base URL, without a trailing slash."""
        if self.slack_api_base_url:
            return self.slack_api_base_url.rstrip("/")
        if self.is_local:
            return f"{self.public_base_url.rstrip('/')}/local/slack/api"
        return "https://slack.com/api"

    def channel_sink_url(self) -> str | None:
        """Where the local stage posts chat and push pages instead of the person's URL (None: to it)."""
        if self.is_local and not self.local_post_to_real_chat_urls:
            return f"{self.public_base_url.rstrip('/')}/local/channel-sink"
        return None

    def pushover_token(self) -> str | None:
        if self.pushover_app_token:
            return self.pushover_app_token
        return LOCAL_PUSHOVER_APP_TOKEN if self.is_local else None

    def slack_token(self) -> str | None:
        """The bot token; the local stage's sink only checks that one is sent."""
        if self.slack_bot_token:
            return self.slack_bot_token
        return LOCAL_SLACK_TOKEN if self.is_local else None

    def slack_teams(self) -> frozenset[str]:
        """The Slack workspaces whose clicks may act; empty: any the signature covers."""
        configured = (
            self.slack_team_id if self.slack_team_id is not None else (LOCAL_SLACK_TEAM_ID if self.is_local else "")
        )
        return frozenset(team.strip() for team in configured.split(",") if team.strip())

    def slack_signing_key(self) -> str | None:
        """The secret Slack signs interactivity requests with; None: clicks are refused."""
        if self.slack_signing_secret:
            return self.slack_signing_secret
        return LOCAL_SLACK_SIGNING_SECRET if self.is_local else None

    def app_url(self) -> str:
        """The responder console's base URL, without a trailing slash."""
        if self.public_app_url:
            return self.public_app_url.rstrip("/")
        return f"{self.public_base_url.rstrip('/')}/app"

    def cognito_issuer(self) -> str | None:
        """The `iss` of the pool's tokens (the same on the emulator, which signs as AWS would)."""
        if not self.cognito_user_pool_id:
            return None
        region = self.cognito_user_pool_id.split("_", 1)[0]
        return f"https://cognito-idp.{region}.amazonaws.com/{self.cognito_user_pool_id}"

    def cognito_jwks_url(self) -> str | None:
        """Where the pool's signing keys are published: the issuer's, or the emulator's locally."""
        if not self.cognito_user_pool_id:
            return None
        if self.is_local and self.aws_endpoint_url:
            return f"{self.aws_endpoint_url.rstrip('/')}/{self.cognito_user_pool_id}/.well-known/jwks.json"
        return f"{self.cognito_issuer()}/.well-known/jwks.json"

    @property
    def secure_cookies(self) -> bool:
        """Cookies are Secure everywhere but the local stack, which serves plain HTTP on loopback."""
        return not self.is_local

    def voice_api_url(self) -> str:
        """The voice provider's API base URL (Twilio's), without a trailing slash."""
        if self.voice_api_base_url:
            return self.voice_api_base_url.rstrip("/")
        if self.is_local:
            return f"{self.public_base_url.rstrip('/')}/local/voice"
        return "https://api.twilio.com"

    def voice_credentials(self) -> tuple[str, str, str] | None:
        """(account SID, auth token, from number); the local stage's sink takes placeholders.
        None when one is missing outside the local stage."""
        sid = self.voice_account_sid or (LOCAL_VOICE_ACCOUNT_SID if self.is_local else None)
        token = self.voice_auth_token or (LOCAL_VOICE_AUTH_TOKEN if self.is_local else None)
        number = self.voice_from_number or (LOCAL_VOICE_FROM_NUMBER if self.is_local else None)
        if not (sid and token and number):
            return None
        return sid, token, number

    def table_name(self, short_name: str) -> str:
        return f"{self.table_prefix}{short_name}"

    def queue_name(self, short_name: str) -> str:
        return f"{self.queue_prefix}{short_name}"


_INSECURE_DEFAULTS = {"local-insecure-api-key-secret"}
LOCAL_SLACK_TOKEN = "xoxb-local-sink-token"
LOCAL_PUSHOVER_APP_TOKEN = "alocalpushoverapplicationtoken"
LOCAL_SLACK_SIGNING_SECRET = "local-slack-signing-secret"
LOCAL_SLACK_TEAM_ID = "T0LOCAL001"
# The local voice sink's credentials; refused outside the local stage (check_secrets).
LOCAL_VOICE_ACCOUNT_SID = "AC00000000000000000000000000local"
LOCAL_VOICE_AUTH_TOKEN = "local-voice-sink-token"
LOCAL_VOICE_FROM_NUMBER = "+15005550006"


# Set by the Lambda runtime in every function's environment.
LAMBDA_MARKERS = ("AWS_LAMBDA_FUNCTION_NAME", "AWS_EXECUTION_ENV")


def from_environment(environ: dict[str, str] | None = None) -> Settings:
    """Settings from the environment. On Lambda, TOCSIN_STAGE must be given: the default stage is
    the local one, whose secrets (Slack signing, voice sink, API key HMAC) are public, so a function
    deployed without it would accept forged clicks (issue 27 finding 10); it refuses to start instead."""
    environ = dict(os.environ if environ is None else environ)
    upper = {key.upper(): value for key, value in environ.items()}
    if "TOCSIN_STAGE" not in upper and any(upper.get(marker) for marker in LAMBDA_MARKERS):
        raise RuntimeError("TOCSIN_STAGE must be set on AWS Lambda (dev or prod); the default is the local stage")
    values: dict[str, Any] = {}
    for name, field in Settings.model_fields.items():
        variable = (field.alias or name).upper()
        if variable in upper:
            values[name] = upper[variable]
    return Settings.model_validate(values)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    settings = from_environment()
    check_secrets(settings)
    return settings


def check_secrets(settings: Settings) -> None:
    if settings.is_local:
        return
    if settings.api_key_hmac_secret in _INSECURE_DEFAULTS:
        raise RuntimeError("API_KEY_HMAC_SECRET must be set outside the local stage")
    if settings.voice_account_sid == LOCAL_VOICE_ACCOUNT_SID or settings.voice_auth_token == LOCAL_VOICE_AUTH_TOKEN:
        raise RuntimeError(
            "VOICE_ACCOUNT_SID and VOICE_AUTH_TOKEN must not be the local sink's outside the local stage"
        )
    if settings.voice_api_base_url and "/local/voice" in settings.voice_api_base_url:
        raise RuntimeError("VOICE_API_BASE_URL must not point at the local voice sink outside the local stage")


def reset_settings() -> None:
    """Forget cached settings (tests and the local runner change the environment)."""
    get_settings.cache_clear()
