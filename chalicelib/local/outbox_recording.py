"""Local stack only: what the app hands to SES and SNS is kept in the outbox table as it is sent.

`install()` adds botocore event handlers to every SES and SNS client the process builds
(`aws.add_client_setup`): the call goes to the emulator unchanged, and once it answered 200
the message is recorded (chalicelib/local/outbox_table.py) under the id SES or SNS gave it:
SendEmail and SendRawEmail as emails (pages, notices, confirmations, Cognito's mails from
cognito_mail.py), Publish to a phone number as an SMS (a Publish to a topic is not a message to
a person). The notification code sends exactly as on AWS and never knows. `make run` and the test
suite install it; a deployed stage never imports this module.

Recording never fails a send: SES or SNS accepted the message, so a recording error is logged
(a missing outbox table, in a test account without one, silently) and the caller gets its answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from chalicelib import aws
from chalicelib.local import outbox_table
from chalicelib.local.outbox_email import from_send_email, from_send_raw_email
from chalicelib.local.outbox_item import OutboxItem, incident_number_in

logger = logging.getLogger("tocsin.local.outbox")

_PARAMS = "tocsin_outbox_params"
_UNIQUE = "tocsin-outbox"


def sms_item(params: Mapping[str, Any], message_id: str) -> OutboxItem | None:
    """A Publish to a phone number; None for one to a topic or an endpoint. SNS keeps no time for
    an SMS, and the outbox shows none (SMS come after the messages that have one)."""
    phone = params.get("PhoneNumber")
    if not phone:
        return None
    text = str(params.get("Message") or "")
    return OutboxItem(
        channel="sms",
        to=str(phone),
        subject=None,
        text=text,
        sent_at=None,
        incident_number=incident_number_in(text),
        id=message_id,
    )


_BUILDERS: dict[str, Callable[[Mapping[str, Any], str], OutboxItem | None]] = {
    "ses.SendEmail": from_send_email,
    "ses.SendRawEmail": from_send_raw_email,
    "sns.Publish": sms_item,
}


def _remember(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
    context[_PARAMS] = dict(params)


def _record(http_response: Any, parsed: dict[str, Any], context: dict[str, Any], event_name: str, **_: Any) -> None:
    params = context.get(_PARAMS)
    if params is None or getattr(http_response, "status_code", None) != 200:
        return  # refused: nothing was sent
    builder = _BUILDERS.get(event_name.removeprefix("after-call."))
    try:
        item = builder(params, str(parsed.get("MessageId") or "")) if builder is not None else None
        if item is not None:
            outbox_table.record(item)
    except Exception as error:  # never the sender's failure: the provider took the message
        if getattr(error, "response", {}).get("Error", {}).get("Code") == "ResourceNotFoundException":
            return  # an account without the outbox table
        logger.warning("the local outbox could not record a message", exc_info=True, extra={"event": event_name})


def _record_sends(client: Any, service: str) -> None:
    events = client.meta.events
    for name in _BUILDERS:
        if name.startswith(f"{service}."):
            events.register(f"before-parameter-build.{name}", _remember, unique_id=f"{_UNIQUE}-params-{name}")
            events.register(f"after-call.{name}", _record, unique_id=f"{_UNIQUE}-record-{name}")


def record_ses(client: Any) -> None:
    _record_sends(client, "ses")


def record_sns(client: Any) -> None:
    _record_sends(client, "sns")


def install() -> None:
    """Record what every SES and SNS client of this process sends from now on (idempotent)."""
    aws.add_client_setup("ses", record_ses)
    aws.add_client_setup("sns", record_sns)


def uninstall() -> None:
    aws.remove_client_setup("ses", record_ses)
    aws.remove_client_setup("sns", record_sns)
