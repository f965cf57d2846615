"""Credential kinds of the chat and push pages' inbound actions: the signed single-use link the
page carried is the proof (chalicelib/paging/link_actions.py holds the rules).

- `page_action_link`: `POST /integrations/page-actions/{token}`, an ntfy notification's action
  button; the token in the path must be Tocsin's, unexpired, and sent by a channel whose buttons
  POST (an email or Teams link acts only through its confirmation page);
- `mattermost_action_token`: `POST /integrations/mattermost/actions`, a Mattermost button; its
  JSON body's `context` must carry the organization's Mattermost token and the signed link;
- `pushover_receipt`: `POST /integrations/pushover/callback/{token}`, Pushover's acknowledgement
  of an emergency page; the token a signed link sent by Pushover, the form's `receipt` the one
  Pushover gave for that page (Pushover signs nothing).

A refusal is 401 INVALID_SIGNATURE (forged, mangled, another organization's token, another
channel's link) or 401 SIGNATURE_EXPIRED; none counts against a bucket (a forgery costs one HMAC).
The verified link is the handler's `call.credential`.
"""

from __future__ import annotations

import json
import urllib.parse

from chalicelib.api.credential_kinds import CredentialKind, Inbound, Verified
from chalicelib.errors import InvalidPayload, PayloadTooLarge

MAX_MATTERMOST_BODY_BYTES = 16 * 1024  # a press is a small JSON object (ids and our context)
MAX_PUSHOVER_FORM_BYTES = 8 * 1024  # the callback is a handful of short fields


def _page_action_link(inbound: Inbound) -> Verified:
    from chalicelib.paging.link_actions import TAP_CHANNELS, verify_link

    return Verified(
        subject=verify_link(
            inbound.path.get("token", ""), channels=TAP_CHANNELS, now=inbound.now, settings=inbound.settings
        )
    )


def _mattermost(inbound: Inbound) -> Verified:
    from chalicelib.paging.link_actions import verify_mattermost

    body = inbound.raw_body
    if len(body) > MAX_MATTERMOST_BODY_BYTES:
        raise PayloadTooLarge(f"The body is larger than {MAX_MATTERMOST_BODY_BYTES // 1024} KiB.")
    try:
        document = json.loads(body)
    except ValueError:
        raise InvalidPayload("The body is not JSON.") from None
    if not isinstance(document, dict):
        raise InvalidPayload("The body is not a JSON object.")
    return Verified(subject=verify_mattermost(document.get("context"), now=inbound.now, settings=inbound.settings))


def _pushover_callback(inbound: Inbound) -> Verified:
    from chalicelib.paging.link_actions import verify_pushover

    body = inbound.raw_body
    if len(body) > MAX_PUSHOVER_FORM_BYTES:
        raise PayloadTooLarge(f"The body is larger than {MAX_PUSHOVER_FORM_BYTES // 1024} KiB.")
    try:
        fields = urllib.parse.parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=50)
    except (UnicodeDecodeError, ValueError):
        raise InvalidPayload("The callback is not UTF-8 form-encoded fields.") from None
    return Verified(
        subject=verify_pushover(inbound.path.get("token", ""), dict(fields), now=inbound.now, settings=inbound.settings)
    )


PAGE_ACTION_LINK = CredentialKind("page_action_link", _page_action_link)
MATTERMOST_ACTION_TOKEN = CredentialKind("mattermost_action_token", _mattermost)
PUSHOVER_RECEIPT = CredentialKind("pushover_receipt", _pushover_callback)
