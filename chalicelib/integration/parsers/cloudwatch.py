"""CloudWatch alarms delivered by SNS to an HTTP(S) subscription.

The SNS signature is always verified first (`sns.verify_sns_message`). Then:
- SubscriptionConfirmation -> action "confirm_subscription" with the checked `subscribe_url`;
- UnsubscribeConfirmation -> "ignore";
- Notification -> the `Message` parsed as an alarm: NewStateValue ALARM -> trigger, OK -> resolve,
  INSUFFICIENT_DATA -> note. Dedup key: AlarmArn. Title "CloudWatch alarm: <AlarmName>".
  Severity: a SEV0..SEV4 token in AlarmDescription or AlarmName, else the service default.
  Service hint: "service_id=SER-nnnnn" (or a svc_ key) in AlarmDescription. The alarm's other
  fields (Trigger, AlarmRule, ...) are the alert's details.
`delivery_id` is the SNS MessageId (stable across SNS retries).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final
from urllib.parse import quote

from chalicelib.errors import InvalidPayload
from chalicelib.integration.normalized import Action, NormalizedAlert, one_line
from chalicelib.integration.parsers._common import (
    compact,
    dig,
    http_url,
    iso_time,
    json_type,
    obj,
    service_hint,
    severity_token,
    text,
)
from chalicelib.integration.parsers.sns import (
    DEFAULT_CERT_HOST_PATTERN,
    NOTIFICATION,
    SUBSCRIPTION_CONFIRMATION,
    CertificateFetcher,
    SnsMessage,
    verify_sns_message,
)
from chalicelib.json_body import JsonBodyError, read_json

STATE_ACTION: Final[Mapping[str, Action]] = {"ALARM": "trigger", "OK": "resolve", "INSUFFICIENT_DATA": "note"}
TITLE_PREFIX: Final = "CloudWatch alarm: "
_SERVICE_ID_RE: Final = re.compile(r"service_id\s*[=:]\s*([A-Za-z0-9_-]+)", re.IGNORECASE)
_ALARM_ARN_RE: Final = re.compile(r"arn:(aws[a-z-]*):cloudwatch:([a-z0-9-]+):([0-9]{12}):alarm:.+")
CHILDREN_LISTED: Final = 10
# Read into the title, description, state and metadata; everything else of the alarm (its Trigger,
# composite rule, children, newer fields) is kept as the alert's details.
ALARM_MAPPED: Final = frozenset(
    {
        "AlarmName",
        "AlarmDescription",
        "AlarmArn",
        "AWSAccountId",
        "NewStateValue",
        "OldStateValue",
        "NewStateReason",
        "StateChangeTime",
        "Region",
    }
)


def parse_cloudwatch(
    headers: Mapping[str, str] | None,
    body: bytes | str,
    *,
    fetch_certificate: CertificateFetcher,
    allowed_cert_host_pattern: str | re.Pattern[str] = DEFAULT_CERT_HOST_PATTERN,
    allow_http_cert_url: bool = False,
    expected_topic_arn: str | None = None,
    now: datetime | None = None,
) -> NormalizedAlert:
    message = verify_sns_message(
        headers,
        body,
        fetch_certificate=fetch_certificate,
        allowed_cert_host_pattern=allowed_cert_host_pattern,
        allow_http_cert_url=allow_http_cert_url,
        expected_topic_arn=expected_topic_arn,
        now=now,
    )
    return sns_to_alert(message)


def sns_to_alert(message: SnsMessage) -> NormalizedAlert:
    """The alert for a verified SNS message."""
    meta = {"sns_message_id": message.message_id, "topic_arn": message.topic_arn, "sns_type": message.type}
    if message.type == SUBSCRIPTION_CONFIRMATION:
        return NormalizedAlert(
            source="cloudwatch",
            action="confirm_subscription",
            title="SNS subscription confirmation",
            summary=f"SNS subscription to {message.topic_arn} awaiting confirmation",
            metadata=meta,
            delivery_id=message.message_id,
            subscribe_url=message.subscribe_url,
        )
    if message.type != NOTIFICATION:
        return NormalizedAlert(
            source="cloudwatch",
            action="ignore",
            title="SNS unsubscribe confirmation",
            summary=f"SNS unsubscribed from {message.topic_arn}",
            metadata=meta,
            delivery_id=message.message_id,
        )
    return alarm_to_alert(_alarm(message.message), message)


def _alarm(raw: str) -> dict[str, Any]:
    try:
        alarm = read_json(raw, nan_as_null=True)
    except JsonBodyError:
        raise InvalidPayload("The SNS Message is not a CloudWatch alarm (not JSON).") from None
    if not isinstance(alarm, dict):
        raise InvalidPayload(f"The SNS Message must be a JSON object, not {json_type(alarm)}.")
    problems = []
    if text(alarm.get("AlarmName")) is None:
        problems.append("'AlarmName' is required in a CloudWatch alarm message.")
    if not isinstance(alarm.get("NewStateValue"), str) or alarm["NewStateValue"].upper() not in STATE_ACTION:
        problems.append("'NewStateValue' must be ALARM, OK or INSUFFICIENT_DATA.")
    if problems:
        raise InvalidPayload.from_problems(problems)
    return alarm


def alarm_to_alert(alarm: dict[str, Any], message: SnsMessage | None = None) -> NormalizedAlert:
    name = str(text(alarm.get("AlarmName")))
    state = str(alarm.get("NewStateValue")).upper()
    old_state = text(alarm.get("OldStateValue"))
    description = text(alarm.get("AlarmDescription"))
    reason = text(alarm.get("NewStateReason"))
    arn = text(alarm.get("AlarmArn"))
    arn_match = _ALARM_ARN_RE.fullmatch(arn or "")
    account = text(alarm.get("AWSAccountId")) or (arn_match.group(3) if arn_match else None)
    dedup = arn or f"cloudwatch:{account or 'unknown'}:{name}"
    title = TITLE_PREFIX + name if len(TITLE_PREFIX + one_line(name, 1000)) <= 200 else name
    trigger = obj(alarm.get("Trigger"))
    children = _children(alarm.get("TriggeringChildren"))
    metadata = {
        "alarm_name": name,
        "alarm_arn": arn,
        "account_id": account,
        "region": arn_match.group(2) if arn_match else None,
        "region_name": text(alarm.get("Region")),
        "old_state": old_state,
        "new_state": state,
        "state_change_time": text(alarm.get("StateChangeTime")),
        "metric_name": text(trigger.get("MetricName")),
        "namespace": text(trigger.get("Namespace")),
        "statistic": text(trigger.get("Statistic")) or text(trigger.get("ExtendedStatistic")),
        "comparison_operator": text(trigger.get("ComparisonOperator")),
        "threshold": text(trigger.get("Threshold")),
        "dimensions": _dimensions(trigger.get("Dimensions")),
        "alarm_rule": text(alarm.get("AlarmRule")),
        "triggering_children": ", ".join(children[:CHILDREN_LISTED]) or None,
    }
    if message is not None:
        metadata |= {
            "sns_message_id": message.message_id,
            "topic_arn": message.topic_arn,
            "sns_subject": message.subject,
        }
    summary = f"CloudWatch alarm {name}: {old_state or '?'} -> {state}"
    hint_match = _SERVICE_ID_RE.search(description or "")
    region = metadata["region"]
    return NormalizedAlert(
        source="cloudwatch",
        action=STATE_ACTION[state],
        title=title,
        description="\n\n".join(part for part in (description, reason) if part) or None,
        severity=severity_token(description, name),
        dedup_key=dedup,
        source_url=_console_url(region, name, arn) if region else None,
        service_hint=service_hint(hint_match.group(1)) if hint_match else None,
        metadata=compact(metadata),
        summary=summary,
        raw_details=alarm,
        occurred_at=iso_time(alarm.get("StateChangeTime")),
        delivery_id=message.message_id if message else None,
        details={k: v for k, v in alarm.items() if k not in ALARM_MAPPED},
    )


def _children(value: object) -> list[str]:
    """TriggeringChildren: documented as strings, seen as objects {Arn, State{Value, Timestamp}}."""
    if not isinstance(value, list):
        return []
    result = []
    for child in value[:50]:
        if isinstance(child, dict):
            arn = text(child.get("Arn")) or text(child.get("arn"))
            state = text(dig(child, "State", "Value"))
            if arn:
                result.append(f"{arn} ({state})" if state else arn)
        elif text(child):
            result.append(str(text(child)))
    return result


def _dimensions(value: object) -> str | None:
    if not isinstance(value, list):
        return None
    pairs = [f"{text(d.get('name'))}={text(d.get('value'))}" for d in value[:10] if isinstance(d, dict)]
    return ", ".join(pairs) or None


def _console_url(region: object, name: str, arn: str | None) -> str | None:
    if not isinstance(region, str) or not arn or ":aws-cn:" in arn or ":aws-us-gov:" in arn:
        return None
    url = (
        f"https://{region}.console.aws.amazon.com/cloudwatch/home?region={region}#alarmsV2:alarm/{quote(name, safe='')}"
    )
    return http_url(url)
